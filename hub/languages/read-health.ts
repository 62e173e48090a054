import type { RawLanguage } from '../../protocol/enums.ts'
import type { HealthState, PrinterHealth } from '../../protocol/printer-health.ts'
import { type Transport, TransportError } from '../transports/transport.ts'
import { type StatusReason, stateOf } from './health-state.ts'
import { driverFor } from './index.ts'

export { REASON_STATES, STATE_PRIORITY, type StatusReason, stateOf } from './health-state.ts'

/** How long one status request waits for its reply unless told otherwise. */
export const DEFAULT_STATUS_TIMEOUT_MS = 2_000

export interface ReadHealthOptions {
  /** Per status request; a language may send several (ESC/POS four, ZPL two). */
  timeoutMs?: number
  /** The clock for `checked_at`. */
  now?: () => Date
}

function health(state: HealthState, reasons: readonly string[], now: () => Date): PrinterHealth {
  return { state, reasons: [...reasons], checked_at: now().toISOString() }
}

/** `offline` for a transport that cannot be reached or dropped; anything else is a bug and is rethrown. */
function transportFailure(error: unknown, now: () => Date): PrinterHealth {
  if (error instanceof TransportError) return health('offline', [`transport_${error.kind}`], now)
  throw error
}

/**
 * Asks a printer for its status in its own language over an OPEN transport and sums the answer up as one
 * state plus machine-readable reasons (the parsers' reasons, see health-state.ts).
 * - A printer that does not answer: `unknown` with `no_status_reply`; many printers never answer, and
 *   that is not a fault.
 * - A transport that rejects with a TransportError: `offline` with `transport_<kind>`
 *   (`transport_unreachable`, `transport_disconnected`, `transport_write_failed`, `transport_busy`).
 */
export async function readHealth(
  transport: Transport,
  language: RawLanguage,
  options: ReadHealthOptions = {},
): Promise<PrinterHealth> {
  const timeoutMs = options.timeoutMs ?? DEFAULT_STATUS_TIMEOUT_MS
  const now = options.now ?? (() => new Date())
  let reasons: StatusReason[] | null
  try {
    reasons = await driverFor(language).readStatus(transport, timeoutMs)
  } catch (error) {
    return transportFailure(error, now)
  }
  if (reasons === null) return health('unknown', ['no_status_reply'], now)
  return health(stateOf(reasons), reasons, now)
}

/**
 * Opens the transport, reads health as readHealth does, and closes it again: for a printer the hub is not
 * otherwise connected to. An `open` that rejects with a TransportError gives `offline`.
 */
export async function probeHealth(
  transport: Transport,
  language: RawLanguage,
  options: ReadHealthOptions = {},
): Promise<PrinterHealth> {
  const now = options.now ?? (() => new Date())
  try {
    await transport.open()
  } catch (error) {
    await transport.close()
    return transportFailure(error, now)
  }
  try {
    return await readHealth(transport, language, options)
  } finally {
    await transport.close()
  }
}
