import type { Transport } from '../transports/transport.ts'
import { type Bitmap, bitmapRows, bytesPerRow, checkBitmap } from './bitmap.ts'
import { reasonsFromBits, type StatusReason, uniqueReasons } from './health-state.ts'
import type { LanguageDriver } from './language-driver.ts'
import type { MediaDefaults } from './media-defaults.ts'
import { encodeRasterJob, type RasterEncoding, type RasterOptions } from './raster-job.ts'

/**
 * ESC/POS real-time status: `DLE EOT n` (0x10 0x04 n), Epson "ESC/POS Command Reference", DLE EOT
 * "Transmit real-time status". The printer answers each request with one byte, in real time, even while
 * offline. In every reply bits 1 and 4 are fixed to 1 and bits 0 and 7 fixed to 0; a byte without that
 * pattern is not a DLE EOT reply (it may be an Automatic Status Back packet or line noise).
 */
export const DLE_EOT_FUNCTIONS = {
  /** n = 1: printer status. */
  printer: 1,
  /** n = 2: offline cause status. */
  offlineCause: 2,
  /** n = 3: error cause status. */
  errorCause: 3,
  /** n = 4: roll paper sensor status. */
  paperSensor: 4,
} as const
export type DleEotFunction = (typeof DLE_EOT_FUNCTIONS)[keyof typeof DLE_EOT_FUNCTIONS]

export function dleEot(n: DleEotFunction): Buffer {
  return Buffer.from([0x10, 0x04, n])
}

/** Bits 1 and 4 on, bits 0 and 7 off: the fixed bits of every DLE EOT reply. */
const FIXED_MASK = 0x93
const FIXED_VALUE = 0x12

export function isRealTimeStatusByte(byte: number): boolean {
  return (byte & FIXED_MASK) === FIXED_VALUE
}

/** The status byte of a reply, or null when the reply is not exactly one byte with the fixed bits. */
export function realTimeStatusByte(reply: Buffer): number | null {
  if (reply.length !== 1) return null
  const byte = reply[0]!
  return isRealTimeStatusByte(byte) ? byte : null
}

/** n = 1 printer status. Bit 2 (drawer kick-out connector pin 3) is not health and is ignored. */
const PRINTER_BITS = {
  3: 'printer_offline', // bit 3: 0 online, 1 offline
  5: 'waiting_for_online_recovery', // bit 5: waiting for online recovery (reserved on some models)
  6: 'paper_feed_button', // bit 6: paper feed button is being pressed (reserved on some models)
} as const satisfies Record<number, StatusReason>

/** n = 2 offline cause status. */
const OFFLINE_CAUSE_BITS = {
  2: 'cover_open', // bit 2: (roll paper) cover is open
  3: 'paper_feed_button', // bit 3: paper is being fed by the paper feed button
  5: 'paper_end_stop', // bit 5: printing stops due to a paper end
  6: 'error_reported', // bit 6: error occurred (the cause is in n = 3)
} as const satisfies Record<number, StatusReason>

/**
 * n = 3 error cause status. Bit 2 is "mechanical error" on Epson TM-U220/TM-L60II (recoverable, e.g. a
 * jam; Citizen uses it for black-mark detection errors) and undefined on others.
 */
const ERROR_CAUSE_BITS = {
  2: 'mechanical_error', // bit 2: mechanical (recoverable) error occurred
  3: 'cutter_error', // bit 3: autocutter error occurred
  5: 'unrecoverable_error', // bit 5: unrecoverable error occurred
  6: 'auto_recoverable_error', // bit 6: automatically recoverable error (e.g. head over temperature)
} as const satisfies Record<number, StatusReason>

export function parsePrinterStatus(byte: number): StatusReason[] {
  return reasonsFromBits(byte, PRINTER_BITS)
}

export function parseOfflineCause(byte: number): StatusReason[] {
  return reasonsFromBits(byte, OFFLINE_CAUSE_BITS)
}

export function parseErrorCause(byte: number): StatusReason[] {
  return reasonsFromBits(byte, ERROR_CAUSE_BITS)
}

/**
 * n = 4 roll paper sensor status: bits 2 and 3 are the near-end sensor (both set: paper near end), bits 5
 * and 6 the paper end sensor (both set: paper not present). Epson sets both bits of a pair together; some
 * clones (Citizen CT-S) report two sensors separately, so either bit of a pair counts.
 */
export function parsePaperSensor(byte: number): StatusReason[] {
  const reasons: StatusReason[] = []
  if (byte & 0x0c) reasons.push('paper_near_end')
  if (byte & 0x60) reasons.push('paper_out')
  return reasons
}

const PARSERS: Record<DleEotFunction, (byte: number) => StatusReason[]> = {
  1: parsePrinterStatus,
  2: parseOfflineCause,
  3: parseErrorCause,
  4: parsePaperSensor,
}

/** The reasons for a set of DLE EOT replies (function → status byte). */
export function parseEscposStatus(bytes: Partial<Record<DleEotFunction, number>>): StatusReason[] {
  const reasons: StatusReason[] = []
  for (const n of [1, 2, 3, 4] as const) {
    const byte = bytes[n]
    if (byte !== undefined) reasons.push(...PARSERS[n](byte))
  }
  return uniqueReasons(reasons)
}

const STATUS_FUNCTIONS = [1, 2, 3, 4] as const
/** The four requests in one write. */
const ALL_STATUS_REQUESTS = Buffer.concat(STATUS_FUNCTIONS.map(dleEot))

/**
 * The printer's four real-time status bytes, asked together: the printer answers each `DLE EOT` as it
 * receives it, in order (Epson's reference: the command is executed in real time on receipt, even offline or
 * with a full receive buffer), so one write and one reply take one round trip to the printer rather than
 * four (on USB, four drains of stale bytes too). A reply of more than four bytes (something unsolicited
 * arrived with it) is not read by position: the requests are then sent one at a time.
 */
export async function readEscposStatus(
  transport: Transport,
  timeoutMs: number,
): Promise<StatusReason[] | null> {
  const reply = await transport.query(ALL_STATUS_REQUESTS, {
    timeoutMs,
    isComplete: (r) => r.length >= STATUS_FUNCTIONS.length,
    partial: true,
  })
  if (reply !== null && reply.length > STATUS_FUNCTIONS.length)
    return readEscposStatusOneByOne(transport, timeoutMs)
  return statusOf((n) => {
    const byte = reply?.[n - 1]
    return byte !== undefined && isRealTimeStatusByte(byte) ? byte : null
  })
}

/** The same, one request at a time, each waiting for its reply. */
async function readEscposStatusOneByOne(
  transport: Transport,
  timeoutMs: number,
): Promise<StatusReason[] | null> {
  const replies: Partial<Record<DleEotFunction, number | null>> = {}
  for (const n of STATUS_FUNCTIONS) {
    const reply = await transport.query(dleEot(n), { timeoutMs, isComplete: (r) => r.length >= 1 })
    replies[n] = reply === null ? null : realTimeStatusByte(reply)
    if (replies[n] === null) break
  }
  return statusOf((n) => replies[n] ?? null)
}

/**
 * The reasons from the status bytes, read in order: null when `DLE EOT 1` went unanswered (the printer does
 * not answer status); what the bytes before the first unanswered one say, and `incomplete_status_reply`,
 * when a later one did.
 */
function statusOf(byteOf: (n: DleEotFunction) => number | null): StatusReason[] | null {
  const bytes: Partial<Record<DleEotFunction, number>> = {}
  for (const n of STATUS_FUNCTIONS) {
    const byte = byteOf(n)
    if (byte === null) return n === 1 ? null : [...parseEscposStatus(bytes), 'incomplete_status_reply']
    bytes[n] = byte
  }
  return parseEscposStatus(bytes)
}

/**
 * How wide a receipt head prints on its paper (Epson TM-T88/T20 specifications, "printable area"): 72 mm of
 * 80 mm paper (576 dots at 203 dpi), 48 mm of 58 mm paper (384 dots); other rolls lose 4 mm on each side.
 */
export function receiptPrintableWidthMm(paperWidthMm: number): number {
  if (paperWidthMm === 80) return 72
  if (paperWidthMm === 58) return 48
  return Math.max(1, paperWidthMm - 8)
}

/**
 * ESC/POS receipt printers: 203 dpi (8 dots/mm) heads on 58 mm or 80 mm rolls, continuous media. The
 * common case (Epson TM-T20/T88 class); pass dpi=, width_mm= or head_dots= for others.
 */
export const RECEIPT_DEFAULTS: MediaDefaults = {
  dpi: 203,
  width: { min: 58, max: 80 },
  height: null,
  label: null,
  printableWidthMm: receiptPrintableWidthMm,
}

/** `ESC @` (0x1B 0x40), "Initialize printer": clears the print buffer and resets modes to their defaults. */
export const ESC_AT = Buffer.from([0x1b, 0x40])

/**
 * `GS V 66 n` (0x1D 0x56 0x42 n), "Select cut mode and cut paper", function B: feeds the paper to the
 * cutting position plus n vertical motion units and makes a partial cut, so the last line clears the cutter.
 */
export const FEED_AND_CUT = Buffer.from([0x1d, 0x56, 0x42, 0x00])

/** The most rows one `GS v 0` carries: printers buffer a raster image whole, and many have small buffers. */
export const RASTER_BAND_ROWS = 256

/**
 * `GS v 0 m xL xH yL yH d1...dk` (0x1D 0x76 0x30), "Print raster bit image", m = 0 (normal density):
 * x = bytes per row, y = rows, data row after row, MSB = leftmost dot, 1 = black. The paper advances by the
 * image's height, so bands print edge to edge.
 */
export function rasterBand(page: Bitmap, from: number, to: number): Buffer {
  const header = Buffer.from([0x1d, 0x76, 0x30, 0x00, 0, 0, 0, 0])
  header.writeUInt16LE(bytesPerRow(page.width), 4)
  header.writeUInt16LE(to - from, 6)
  return Buffer.concat([header, bitmapRows(page, from, to)])
}

/**
 * ESC/POS raster job: `ESC @`, then each page as `GS v 0` bands of at most RASTER_BAND_ROWS rows followed
 * by `GS V 66 0` (feed and cut). ESC/POS has no copy count, so `copies` repeats the page sequence.
 */
export const escposRaster: RasterEncoding = {
  prologue: ESC_AT,
  page(page, quantity) {
    checkBitmap(page)
    const bands: Buffer[] = []
    for (let from = 0; from < page.height; from += RASTER_BAND_ROWS)
      bands.push(rasterBand(page, from, Math.min(page.height, from + RASTER_BAND_ROWS)))
    const parts: Buffer[] = []
    for (let copy = 0; copy < quantity; copy++) parts.push(...bands, FEED_AND_CUT)
    return Buffer.concat(parts)
  },
}

export function encodeEscposRaster(pages: readonly Bitmap[], options: RasterOptions): Buffer {
  return encodeRasterJob(escposRaster, pages, options)
}

export const escposDriver: LanguageDriver = {
  language: 'escpos',
  mediaDefaults: RECEIPT_DEFAULTS,
  readStatus: readEscposStatus,
  raster: escposRaster,
}
