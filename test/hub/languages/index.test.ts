import { describe, expect, it } from 'vitest'
import { driverFor, LANGUAGE_DRIVERS } from '../../../hub/languages/index.ts'
import { RAW_LANGUAGES } from '../../../protocol/enums.ts'
import { patternBitmap } from './test-bitmaps.ts'

describe('language registry', () => {
  it('has one driver per raw language, named for it', () => {
    expect(Object.keys(LANGUAGE_DRIVERS).sort()).toEqual([...RAW_LANGUAGES].sort())
    for (const language of RAW_LANGUAGES) expect(driverFor(language).language).toBe(language)
  })

  it.each(RAW_LANGUAGES)('%s: encodes a page, and refuses copies below 1', (language) => {
    const { encodeRaster } = driverFor(language)
    expect(encodeRaster([patternBitmap(20, 5)], { copies: 1, dpi: 203 }).length).toBeGreaterThan(15)
    expect(() => encodeRaster([patternBitmap(20, 5)], { copies: 0, dpi: 203 })).toThrow(RangeError)
  })
})
