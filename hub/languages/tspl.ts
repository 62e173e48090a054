import type { Transport } from '../transports/transport.ts'
import { type Bitmap, bytesPerRow, checkBitmap } from './bitmap.ts'
import { reasonsFromBits, type StatusReason } from './health-state.ts'
import type { LanguageDriver } from './language-driver.ts'
import { LABEL_DEFAULTS } from './media-defaults.ts'
import { encodeRasterJob, type RasterEncoding, type RasterOptions } from './raster-job.ts'

/**
 * TSPL status: `ESC ! ?` (0x1B 0x21 0x3F), TSC "TSPL/TSPL2 Programming Language" manual, status polling
 * command `<ESC>!?`. It may be sent at any time, even in an error state, and the printer answers with one
 * byte, one flag per bit; 0x00 means ready to print. The byte has no fixed bits, so any one byte is a reply.
 */
export const TSPL_STATUS_QUERY = Buffer.from([0x1b, 0x21, 0x3f])

const STATUS_BITS = {
  0: 'head_open', // bit 0: head opened
  1: 'paper_jam', // bit 1: paper jam
  2: 'paper_out', // bit 2: out of paper
  3: 'ribbon_out', // bit 3: out of ribbon
  4: 'paused', // bit 4: pause
  5: 'printing', // bit 5: printing
  6: 'cover_open', // bit 6: cover opened (optional on some models)
  7: 'other_error', // bit 7: other error (TSC); environment temperature over range on some clones
} as const satisfies Record<number, StatusReason>

export function parseTsplStatus(byte: number): StatusReason[] {
  return reasonsFromBits(byte, STATUS_BITS)
}

/** Sends `ESC ! ?`; null when nothing comes back. */
export async function readTsplStatus(
  transport: Transport,
  timeoutMs: number,
): Promise<StatusReason[] | null> {
  const reply = await transport.query(TSPL_STATUS_QUERY, { timeoutMs, isComplete: (r) => r.length >= 1 })
  if (reply === null || reply.length !== 1) return null
  return parseTsplStatus(reply[0]!)
}

/** The gap between die-cut labels assumed until a printer URI can state it (`GAP m mm,n mm`). */
export const TSPL_LABEL_GAP_MM = 3

/** Dots to millimetres at `dpi`, to 0.1 mm (TSPL takes decimal sizes). */
function millimetres(dots: number, dpi: number): string {
  return String(Math.round((dots * 254) / dpi) / 10)
}

/**
 * `BITMAP x,y,width,height,mode,data` (TSC "TSPL/TSPL2 Programming Language", BITMAP): width in bytes,
 * height in dots, mode 0 = OVERWRITE, then width × height bytes. Its polarity is the inverse of ESC/POS
 * and ZPL: a 1 bit is a white dot, so the rows are inverted (and row padding becomes white).
 */
export function tsplBitmap(page: Bitmap): Buffer {
  const inverted = Buffer.from(page.data)
  for (let i = 0; i < inverted.length; i++) inverted[i] = ~inverted[i]! & 0xff
  const head = `BITMAP 0,0,${bytesPerRow(page.width)},${page.height},0,`
  return Buffer.concat([Buffer.from(head, 'latin1'), inverted, Buffer.from('\r\n', 'latin1')])
}

/**
 * TSPL raster job, per label (TSPL/TSPL2 Programming Language): `SIZE m mm,n mm` (label width and length),
 * `GAP m mm,0 mm` (gap between labels, no offset), `CLS` (clear the image buffer), the page as BITMAP at
 * 0,0, and `PRINT m,n`: m sets of the label, n copies of each set; `PRINT 1,n` prints it n times.
 */
export const tsplRaster: RasterEncoding = {
  prologue: Buffer.alloc(0),
  page(page, quantity, options) {
    checkBitmap(page)
    const line = (text: string) => Buffer.from(`${text}\r\n`, 'latin1')
    return Buffer.concat([
      line(`SIZE ${millimetres(page.width, options.dpi)} mm,${millimetres(page.height, options.dpi)} mm`),
      line(`GAP ${TSPL_LABEL_GAP_MM} mm,0 mm`),
      line('CLS'),
      tsplBitmap(page),
      line(`PRINT 1,${quantity}`),
    ])
  },
}

export function encodeTsplRaster(pages: readonly Bitmap[], options: RasterOptions): Buffer {
  return encodeRasterJob(tsplRaster, pages, options)
}

export const tsplDriver: LanguageDriver = {
  language: 'tspl',
  mediaDefaults: LABEL_DEFAULTS,
  readStatus: readTsplStatus,
  raster: tsplRaster,
}
