import { inflateSync } from 'node:zlib'
import { describe, expect, it } from 'vitest'
import { crc16Xmodem } from '../../../hub/languages/crc16-xmodem.ts'
import { encodeZplRaster } from '../../../hub/languages/zpl.ts'
import { decodeZplRaster } from '../../simulators/decoders/zpl-raster.ts'
import { bitmapFromRows, patternBitmap } from './test-bitmaps.ts'

/** 20 dots wide: 3 bytes per row, the last with 4 padding bits. */
const SMALL = bitmapFromRows([
  '#...................', // 80 00 00
  '####....####....####', // f0 f0 f0
  '#.#.#.#.#.#.#.#.#.#.', // aa aa a0
  '...................#', // 00 00 10
  '##################.#', // ff ff d0
])
const SMALL_ROWS = Buffer.from('800000f0f0f0aaaaa0000010ffffd0', 'hex')
/** Base64 of Node's zlib deflate of SMALL_ROWS (default level); checked below by inflating it. */
const SMALL_Z64 = 'eJxrYGD48OHDqlULGBgE/v+/AAA8NAgj'

describe('CRC-16/XMODEM', () => {
  it('gives the catalogue check value and the CRC a Zebra-made Z64 field carries', () => {
    expect(crc16Xmodem(Buffer.from('123456789'))).toBe(0x31c3)
    expect(crc16Xmodem(Buffer.from('eJw7b/P5PG0RAwONLQDbAQB3sYGX'))).toBe(0xeb2d) // "...:Z64:eJw7...:EB2D"
  })
})

describe('ZPL raster encoder', () => {
  it('sends ^XA ^PW ^LL, the page as ^GFA Z64 at ^FO0,0 with its CRC, ^PQ and ^XZ', () => {
    expect(inflateSync(Buffer.from(SMALL_Z64, 'base64'))).toEqual(SMALL_ROWS)
    expect(encodeZplRaster([SMALL], { copies: 2, dpi: 203 }).toString('latin1')).toBe(
      ['^XA', '^PW20', '^LL5', `^FO0,0^GFA,15,15,3,:Z64:${SMALL_Z64}:4256^FS`, '^PQ2', '^XZ', ''].join('\n'),
    )
  })

  it('prints a longer document as whole sequences, one label per page, ^PQ1 each', () => {
    const first = patternBitmap(21, 7)
    const second = patternBitmap(21, 9)
    const labels = decodeZplRaster(encodeZplRaster([first, second], { copies: 2, dpi: 203 }))
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
    expect(decodeZplRaster(encodeZplRaster([page], { copies: 3, dpi: 203 }))).toEqual([{ page, quantity: 3 }])
  })

  it('is caught by the decoder when the CRC does not match', () => {
    const bytes = encodeZplRaster([SMALL], { copies: 1, dpi: 203 })
      .toString('latin1')
      .replace(':4256^', ':4257^')
    expect(() => decodeZplRaster(Buffer.from(bytes, 'latin1'))).toThrow('bad Z64 CRC')
  })
})
