import { describe, expect, it } from 'vitest'
import { encodeCpclRaster } from '../../../hub/languages/cpcl.ts'
import { decodeCpclRaster } from '../../simulators/decoders/cpcl-raster.ts'
import { bitmapFromRows, byteAligned, patternBitmap } from './test-bitmaps.ts'

/** 20 dots wide: 3 bytes per row, the last with 4 padding bits. */
const SMALL = bitmapFromRows([
  '#...................', // 80 00 00
  '####....####....####', // f0 f0 f0
  '#.#.#.#.#.#.#.#.#.#.', // aa aa a0
  '...................#', // 00 00 10
  '##################.#', // ff ff d0
])

describe('CPCL raster encoder', () => {
  it('sends the ! header with height and quantity, EG in hexadecimal, FORM and PRINT', () => {
    expect(encodeCpclRaster([SMALL], { copies: 2, dpi: 203 }).toString('latin1')).toBe(
      '! 0 200 200 5 2\r\nEG 3 5 0 0 800000F0F0F0AAAAA0000010FFFFD0\r\nFORM\r\nPRINT\r\n',
    )
  })

  it('prints a longer document as whole sequences, quantity 1 per label', () => {
    const first = patternBitmap(24, 7)
    const second = patternBitmap(24, 9)
    const labels = decodeCpclRaster(encodeCpclRaster([first, second], { copies: 2, dpi: 203 }))
    expect(labels).toEqual([first, second, first, second].map((page) => ({ page, quantity: 1 })))
  })

  it.each([
    [1, 1],
    [8, 1],
    [20, 5],
    [383, 257],
    [576, 800],
    [832, 1624],
  ])('round-trips a %i × %i page through the decoder dot for dot', (width, height) => {
    const page = patternBitmap(width, height)
    expect(decodeCpclRaster(encodeCpclRaster([page], { copies: 1, dpi: 203 }))).toEqual([
      { page: byteAligned(page), quantity: 1 },
    ])
  })
})
