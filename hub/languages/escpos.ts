import type { Transport } from '../transports/transport.ts'
import { reasonsFromBits, type StatusReason, uniqueReasons } from './health-state.ts'
import type { LanguageDriver } from './language-driver.ts'
import type { MediaDefaults } from './media-defaults.ts'

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

/**
 * Sends DLE EOT 1, 2, 3 and 4 in turn. Resolves null when the first gets no valid reply (the printer does
 * not answer status); a later one that goes unanswered ends the round with `incomplete_status_reply`.
 */
export async function readEscposStatus(
  transport: Transport,
  timeoutMs: number,
): Promise<StatusReason[] | null> {
  const bytes: Partial<Record<DleEotFunction, number>> = {}
  for (const n of [1, 2, 3, 4] as const) {
    const reply = await transport.query(dleEot(n), { timeoutMs, isComplete: (r) => r.length >= 1 })
    const byte = reply === null ? null : realTimeStatusByte(reply)
    if (byte === null) {
      if (n === 1) return null
      return [...parseEscposStatus(bytes), 'incomplete_status_reply']
    }
    bytes[n] = byte
  }
  return parseEscposStatus(bytes)
}

/**
 * ESC/POS receipt printers: 203 dpi (8 dots/mm) heads on 58 mm or 80 mm rolls, continuous media. The
 * common case (Epson TM-T20/T88 class); pass dpi= or width_mm= for others.
 */
export const RECEIPT_DEFAULTS: MediaDefaults = { dpi: 203, width: { min: 58, max: 80 }, height: null }

export const escposDriver: LanguageDriver = {
  language: 'escpos',
  mediaDefaults: RECEIPT_DEFAULTS,
  readStatus: readEscposStatus,
}
