import type { Transport } from '../transports/transport.ts'
import { reasonsFromBits, type StatusReason } from './health-state.ts'
import type { LanguageDriver } from './language-driver.ts'
import { LABEL_DEFAULTS } from './media-defaults.ts'

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

export const cpclDriver: LanguageDriver = {
  language: 'cpcl',
  mediaDefaults: LABEL_DEFAULTS,
  readStatus: readCpclStatus,
}
