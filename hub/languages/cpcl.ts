import type { Transport } from '../transports/transport.ts'
import { type Bitmap, bytesPerRow, checkBitmap } from './bitmap.ts'
import { reasonsFromBits, type StatusReason } from './health-state.ts'
import type { LanguageDriver } from './language-driver.ts'
import { LABEL_DEFAULTS } from './media-defaults.ts'
import { encodeRasterJob, type RasterEncoding, type RasterOptions } from './raster-job.ts'

/**
 * CPCL status: `ESC h` (0x1B 0x68), Zebra "Mobile Printer CPCL Programming Manual", Printer Escape Commands,
 * "Get Printer Status". A returned byte means the printer is operational and has finished processing the
 * previous label; bits 5 to 7 are not defined and are ignored.
 */
export const CPCL_STATUS_QUERY = Buffer.from([0x1b, 0x68])

const STATUS_BITS = {
  0: 'printing', // bit 0: printer status (0 ready, 1 busy)
  1: 'paper_out', // bit 1: paper status (0 paper present, 1 out of paper)
  2: 'head_open', // bit 2: latch status (0 latch closed, 1 latch open)
  3: 'battery_low', // bit 3: battery status (0 voltage OK, 1 low battery)
  4: 'printer_reset', // bit 4: printer reset (1 = powered on and reset; cleared by ESC N)
} as const satisfies Record<number, StatusReason>

export function parseCpclStatus(byte: number): StatusReason[] {
  return reasonsFromBits(byte, STATUS_BITS)
}

/** Sends `ESC h`; null when nothing comes back. */
export async function readCpclStatus(
  transport: Transport,
  timeoutMs: number,
): Promise<StatusReason[] | null> {
  const reply = await transport.query(CPCL_STATUS_QUERY, { timeoutMs, isComplete: (r) => r.length >= 1 })
  if (reply === null || reply.length !== 1) return null
  return parseCpclStatus(reply[0]!)
}

/**
 * CPCL raster job, per label (Zebra "Mobile Printer CPCL Programming Manual"):
 * - `! offset 200 200 height qty`: the label header; offset 0, the 200 × 200 resolution every model takes
 *   in the header, the label height in dots, and qty, how many of the label to print;
 * - `EG width height x y data` (EXPANDED-GRAPHICS): width in bytes, height in dots, at x, y = 0, 0, the rows
 *   as hexadecimal text (1 = black, MSB = leftmost dot), so no byte of the image can be taken for a command;
 * - `FORM`: feed to the top of the next form after printing; `PRINT`: print and end the label.
 */
export const cpclRaster: RasterEncoding = {
  prologue: Buffer.alloc(0),
  page(page, quantity) {
    checkBitmap(page)
    const hex = Buffer.from(page.data).toString('hex').toUpperCase()
    const lines = [
      `! 0 200 200 ${page.height} ${quantity}`,
      `EG ${bytesPerRow(page.width)} ${page.height} 0 0 ${hex}`,
      'FORM',
      'PRINT',
    ]
    return Buffer.from(lines.map((line) => `${line}\r\n`).join(''), 'latin1')
  },
}

export function encodeCpclRaster(pages: readonly Bitmap[], options: RasterOptions): Buffer {
  return encodeRasterJob(cpclRaster, pages, options)
}

export const cpclDriver: LanguageDriver = {
  language: 'cpcl',
  mediaDefaults: LABEL_DEFAULTS,
  readStatus: readCpclStatus,
  raster: cpclRaster,
}
