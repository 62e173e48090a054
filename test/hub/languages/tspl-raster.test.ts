import { describe, expect, it } from 'vitest'
import { encodeTsplRaster } from '../../../hub/languages/tspl.ts'
import { decodeTsplRaster } from '../../simulators/decoders/tspl-raster.ts'
import { bitmapFromRows, byteAligned, patternBitmap } from './test-bitmaps.ts'

/** 20 dots wide: 3 bytes per row, the last with 4 padding bits. */
const SMALL = bitmapFromRows([
  '#...................', // 80 00 00 → inverted 7f ff ff
  '####....####....####', // f0 f0 f0 → 0f 0f 0f
  '#.#.#.#.#.#.#.#.#.#.', // aa aa a0 → 55 55 5f
  '...................#', // 00 00 10 → ff ff ef
  '##################.#', // ff ff d0 → 00 00 2f
])

describe('TSPL raster encoder', () => {
  it('sends SIZE, GAP, CLS, BITMAP with inverted polarity (1 = white, padding white) and PRINT 1,n', () => {
    const expected = Buffer.concat([
      Buffer.from('SIZE 2.5 mm,0.6 mm\r\nGAP 3 mm,0 mm\r\nCLS\r\nBITMAP 0,0,3,5,0,', 'latin1'),
      Buffer.from('7fffff0f0f0f55555fffffef00002f', 'hex'),
      Buffer.from('\r\nPRINT 1,2\r\n', 'latin1'),
    ])
    expect(encodeTsplRaster([SMALL], { copies: 2, dpi: 203 })).toEqual(expected)
  })

  it('sizes the label in mm from the dots and the printer resolution', () => {
    const label = patternBitmap(812, 1218) // 4 × 6 in at 203 dpi
    const head = encodeTsplRaster([label], { copies: 1, dpi: 203 }).toString('latin1', 0, 40)
    expect(head.split('\r\n')[0]).toBe('SIZE 101.6 mm,152.4 mm')
    const head300 = encodeTsplRaster([patternBitmap(1200, 1800)], { copies: 1, dpi: 300 }).toString(
      'latin1',
      0,
      40,
    )
    expect(head300.split('\r\n')[0]).toBe('SIZE 101.6 mm,152.4 mm')
  })

  it('prints a longer document as whole sequences, PRINT 1,1 per label', () => {
    const first = patternBitmap(24, 7)
    const second = patternBitmap(24, 9)
    const labels = decodeTsplRaster(encodeTsplRaster([first, second], { copies: 2, dpi: 203 }))
    expect(labels).toEqual([first, second, first, second].map((page) => ({ page, quantity: 1 })))
  })

  it.each([
    [1, 1],
    [8, 1],
    [20, 5],
    [383, 257],
    [812, 1218],
    [832, 1624],
  ])('round-trips a %i × %i page through the decoder dot for dot', (width, height) => {
    const page = patternBitmap(width, height)
    expect(decodeTsplRaster(encodeTsplRaster([page], { copies: 4, dpi: 203 }))).toEqual([
      { page: byteAligned(page), quantity: 4 },
    ])
  })
})
