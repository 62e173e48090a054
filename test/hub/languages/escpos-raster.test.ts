import { describe, expect, it } from 'vitest'
import { encodeEscposRaster, RASTER_BAND_ROWS } from '../../../hub/languages/escpos.ts'
import { decodeEscposRaster } from '../../simulators/decoders/escpos-raster.ts'
import { bitmapFromRows, byteAligned, patternBitmap } from './test-bitmaps.ts'

const hex = (text: string) => Buffer.from(text.replace(/\s+/g, ''), 'hex')

/** 20 dots wide: 3 bytes per row, the last with 4 padding bits. */
const SMALL = bitmapFromRows([
  '#...................', // 80 00 00
  '####....####....####', // f0 f0 f0
  '#.#.#.#.#.#.#.#.#.#.', // aa aa a0
  '...................#', // 00 00 10
  '##################.#', // ff ff d0
])

describe('ESC/POS raster encoder', () => {
  it('sends ESC @, one GS v 0 band (m = 0, 3 bytes × 5 rows, MSB = leftmost, 1 = black) and GS V 66 0', () => {
    expect(encodeEscposRaster([SMALL], { copies: 1, dpi: 203 })).toEqual(
      hex(`
        1b40
        1d763000 0300 0500
        800000 f0f0f0 aaaaa0 000010 ffffd0
        1d564200`),
    )
  })

  it(`splits a tall page into bands of at most ${RASTER_BAND_ROWS} rows, in order`, () => {
    const page = patternBitmap(16, 600)
    const bytes = encodeEscposRaster([page], { copies: 1, dpi: 203 })
    const band = (rows: number, from: number) =>
      Buffer.concat([
        hex(`1d763000 0200 ${hex2(rows)}`),
        Buffer.from(page.data.subarray(from * 2, (from + rows) * 2)),
      ])
    expect(bytes).toEqual(
      Buffer.concat([hex('1b40'), band(256, 0), band(256, 256), band(88, 512), hex('1d564200')]),
    )
  })

  it('repeats the whole page sequence for copies, each page cut, with one ESC @', () => {
    const first = patternBitmap(24, 3)
    const second = bitmapFromRows(['#'.repeat(24), '.'.repeat(24)])
    const bytes = encodeEscposRaster([first, second], { copies: 2, dpi: 203 })
    expect(bytes.subarray(0, 2)).toEqual(hex('1b40'))
    expect(decodeEscposRaster(bytes)).toEqual([first, second, first, second])
  })

  it('prints a one-page document copies times', () => {
    const bytes = encodeEscposRaster([SMALL], { copies: 3, dpi: 203 })
    expect(decodeEscposRaster(bytes)).toEqual([SMALL, SMALL, SMALL].map(byteAligned))
  })

  it.each([
    [1, 1],
    [8, 1],
    [20, 5],
    [383, 257],
    [576, 300],
    [832, 1218],
  ])('round-trips a %i × %i page through the decoder dot for dot', (width, height) => {
    const page = patternBitmap(width, height)
    expect(decodeEscposRaster(encodeEscposRaster([page], { copies: 1, dpi: 203 }))).toEqual([
      byteAligned(page),
    ])
  })

  it('refuses a bitmap whose data does not match its size', () => {
    expect(() =>
      encodeEscposRaster([{ width: 9, height: 2, data: new Uint8Array(3) }], { copies: 1, dpi: 203 }),
    ).toThrow(RangeError)
  })
})

/** yL yH of a GS v 0 header. */
function hex2(rows: number): string {
  return Buffer.from([rows & 0xff, rows >> 8]).toString('hex')
}
