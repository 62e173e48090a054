import { describe, expect, it } from 'vitest'
import { driverFor, LANGUAGE_DRIVERS } from '../../../hub/languages/index.ts'
import { encodeRasterJob } from '../../../hub/languages/raster-job.ts'
import { RAW_LANGUAGES } from '../../../protocol/enums.ts'
import { patternBitmap } from './test-bitmaps.ts'

describe('language registry', () => {
  it('has one driver per raw language, named for it', () => {
    expect(Object.keys(LANGUAGE_DRIVERS).sort()).toEqual([...RAW_LANGUAGES].sort())
    for (const language of RAW_LANGUAGES) expect(driverFor(language).language).toBe(language)
  })

  it.each(RAW_LANGUAGES)(
    '%s: a job is its prologue and then each page, and copies below 1 are refused',
    (language) => {
      const { raster } = driverFor(language)
      const [a, b] = [patternBitmap(20, 5), patternBitmap(16, 3)]
      const options = { copies: 1, dpi: 203 }
      expect(encodeRasterJob(raster, [a, b], options)).toEqual(
        Buffer.concat([raster.prologue, raster.page(a, 1, options), raster.page(b, 1, options)]),
      )
      expect(() => encodeRasterJob(raster, [a], { copies: 0, dpi: 203 })).toThrow(RangeError)
    },
  )
})
