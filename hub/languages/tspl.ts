import type { Transport } from '../transports/transport.ts'
import { reasonsFromBits, type StatusReason } from './health-state.ts'
import type { LanguageDriver } from './language-driver.ts'
import { LABEL_DEFAULTS } from './media-defaults.ts'

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

export const tsplDriver: LanguageDriver = {
  language: 'tspl',
  mediaDefaults: LABEL_DEFAULTS,
  readStatus: readTsplStatus,
}
