import { describe, expect, it } from 'vitest'
import { ApiError } from '../../../../print-api/api-error.ts'
import { findForbiddenCommand, inspectRaw } from '../../../../print-api/documents/raw-inspection/index.ts'

const hex = (text: string) => Buffer.from(text.replace(/\s+/g, ''), 'hex')
const text = (value: string) => Buffer.from(value, 'latin1')
const join = (...parts: Buffer[]) => Buffer.concat(parts)
const le16 = (n: number) => Buffer.from([n & 0xff, n >> 8])

/** GS v 0 raster: `widthBytes` × `height` bytes of image data. */
function raster(data: Buffer, widthBytes: number): Buffer {
  return join(hex('1d7630 00'), le16(widthBytes), le16(data.length / widthBytes), data)
}

/** GS ( k 2D code data: pL pH cn fn m d1...dk. */
function gsParenK(fn: number, data: Buffer): Buffer {
  return join(hex('1d286b'), le16(data.length + 3), Buffer.from([49, fn, 48]), data)
}

/** GS ( L / GS 8 L graphics: m fn + params. */
function gsParenL(fn: number, params: Buffer): Buffer {
  return join(hex('1d284c'), le16(params.length + 2), Buffer.from([48, fn]), params)
}

const RECEIPT = join(
  hex('1b40'), // ESC @
  hex('1b6101'), // ESC a 1 centre
  hex('1b2130'), // ESC ! double
  text('CAFE DU COIN\n'),
  hex('1b2100 1b6100'),
  text('2 x Espresso        5.00\n'),
  hex('1b4501'),
  text('TOTAL               5.00\n'),
  hex('1b4500 1d2111 1d2100'),
  hex('1d6b02'), // GS k 2 EAN13, NUL terminated
  text('4006381333931'),
  hex('00'),
  hex('1d6b49 0c'), // GS k 73 (CODE128) n=12
  text('{B123456789A'),
  gsParenK(80, text('https://example.com/receipt/1')), // QR store
  hex('1d286b 0300 315130'), // QR print
  raster(Buffer.alloc(64, 0xaa), 8),
  hex('1b6403'), // ESC d 3
  hex('1d5641 03'), // GS V 65 3
)

function reasonOf(bytes: Buffer) {
  return findForbiddenCommand(bytes, 'escpos')
}

describe('ESC/POS inspection', () => {
  it('passes a normal receipt: text, styles, bar codes, QR code, raster image, cut', () => {
    expect(reasonOf(RECEIPT)).toBeNull()
    expect(() => inspectRaw(RECEIPT, 'escpos')).not.toThrow()
  })

  it('passes a GS v 0 image whose data holds GS ( E, FS q and GS ( C bytes', () => {
    const trap = Buffer.alloc(256, 0)
    hex('1d2845 0300 01494e').copy(trap, 10) // GS ( E fn 1 "IN": enter user setting mode
    hex('1c71 01').copy(trap, 100) // FS q
    hex('1d2843 0500 0001').copy(trap, 200) // GS ( C
    expect(reasonOf(join(hex('1b40'), raster(trap, 16), hex('1d5600')))).toBeNull()
  })

  it('passes the data of ESC *, GS ( L raster, GS 8 L, GS ( k and ESC & when it holds forbidden bytes', () => {
    const bad = hex('1d2845 0300 01494e 1c71')
    const escStar = join(hex('1b2a21'), le16(bad.length / 3 + 1), bad, Buffer.alloc(3 - (bad.length % 3), 0))
    const storeRaster = gsParenL(112, join(hex('3031 31 31'), le16(1), le16(bad.length), bad))
    const gs8L = join(hex('1d384c'), Buffer.from([bad.length + 2, 0, 0, 0, 48, 112]), bad)
    const escAmp = join(hex('1b26 03 41 41 04'), bad, Buffer.alloc(12 - bad.length, 0))
    for (const command of [escStar, storeRaster, gs8L, gsParenK(80, bad), escAmp]) {
      expect(reasonOf(join(hex('1b40'), command, text('ok\n')))).toBeNull()
    }
  })

  it.each([
    [
      'GS ( E user setup (memory switches, interfaces)',
      hex('1d2845 0300 01494e'),
      'escpos_user_setup',
      'GS ( E fn=1',
    ],
    ['GS ( E set serial interface', hex('1d2845 0400 0b 01 3936'), 'escpos_user_setup', 'GS ( E fn=11'],
    ['GS ( C NV user memory', hex('1d2843 0500 00 31 20 20 41'), 'escpos_nv_user_memory', 'GS ( C fn=49'],
    ['FS g 1 write NV user memory', hex('1c6731 00 00000000 0100 41'), 'escpos_nv_user_memory', 'FS g 1'],
    ['FS q define NV bit image', hex('1c71 01 0100 0100'), 'escpos_nv_graphics', 'FS q'],
    [
      'GS ( L fn 65 delete all NV graphics',
      hex('1d284c 0500 30 41 434c52'),
      'escpos_nv_graphics',
      'GS ( L fn=65',
    ],
    ['GS ( L fn 66 delete NV graphics', hex('1d284c 0400 30 42 2020'), 'escpos_nv_graphics', 'GS ( L fn=66'],
    [
      'GS ( L fn 67 define NV graphics',
      hex('1d284c 0b00 30 43 30 2020 01 0800 0100 31 ff'),
      'escpos_nv_graphics',
      'GS ( L fn=67',
    ],
    [
      'GS 8 L fn 68 define NV graphics',
      hex('1d384c 0c000000 30 44 30 2020 01 0800 0100 31 ff 00'),
      'escpos_nv_graphics',
      'GS 8 L fn=68',
    ],
    [
      'GS D fn 67 define NV graphics from BMP',
      hex('1d44 30 43 30 2020 30 31 424d'),
      'escpos_nv_graphics',
      'GS D fn=67',
    ],
    ['GS ( M fn 1 save settings', hex('1d284d 0200 01 01'), 'escpos_save_settings', 'GS ( M fn=1'],
    ['GS ( M fn 51 autoload settings', hex('1d284d 0200 33 31'), 'escpos_save_settings', 'GS ( M fn=51'],
    ['GS g 0 initialize maintenance counter', hex('1d6730 00 1400'), 'escpos_maintenance_counter', 'GS g 0'],
    ['ESC [ } flash download mode', hex('1b5b7d'), 'firmware_download', 'ESC [ }'],
  ])('refuses %s', (_, command, reason, shown) => {
    const bytes = join(hex('1b40'), text('Hello\n'), command, text('more\n'))
    expect(reasonOf(bytes)).toEqual({ reason, command: shown, offset: 8 })
    try {
      inspectRaw(bytes, 'escpos')
      expect.unreachable()
    } catch (error) {
      expect(error).toBeInstanceOf(ApiError)
      expect((error as ApiError).status).toBe(422)
      expect((error as ApiError).code).toBe('raw_command_forbidden')
      expect((error as ApiError).details).toEqual({ reason, command: shown, offset: 8 })
    }
  })

  it('reads the data of an image command with out-of-range parameters as commands', () => {
    const setup = hex('1d2845 0300 01494e')
    // ESC * with an unknown mode m: "nL and the data following are processed as normal data"
    expect(reasonOf(join(hex('1b2a05 0800'), setup, Buffer.alloc(8)))).toMatchObject({
      reason: 'escpos_user_setup',
    })
    // GS v 0 with xH ≠ 0: some clones ignore xH, so their image ends long before Epson's would
    const wide = join(hex('1d7630 00 0101 0200'), Buffer.alloc(2), setup, Buffer.alloc(600))
    expect(reasonOf(wide)).toMatchObject({ reason: 'escpos_user_setup' })
  })

  it('finds a forbidden command right after an image', () => {
    const bytes = join(raster(Buffer.alloc(32, 0xff), 4), hex('1d2845 0300 01494e'))
    expect(reasonOf(bytes)?.offset).toBe(8 + 32)
  })

  it('passes GS ( L functions that print or use download (RAM) graphics, and GS ( M fn 2 (load)', () => {
    const bytes = join(
      gsParenL(69, hex('2020 01 01')),
      gsParenL(83, hex('30 2020 01 0800 0100 31 ff')),
      hex('1d284d 0200 02 01'),
    )
    expect(reasonOf(bytes)).toBeNull()
  })

  it('treats a truncated command at the end as ending the data', () => {
    expect(reasonOf(hex('1b40 1d7630 00 ff ff'))).toBeNull()
    expect(reasonOf(hex('1d28'))).toBeNull()
  })
})
