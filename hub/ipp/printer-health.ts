import type { HealthState, PrinterHealth } from '../../protocol/printer-health.ts'
import type { IppError } from './ipp-error.ts'

/** At most this many reasons are reported, each at most this long: a printer may list many. */
const MAX_REASONS = 16
const MAX_REASON_LENGTH = 100

/**
 * printer-state-reasons keywords (RFC 8011 §5.4.12) that say why a stopped printer stopped, and the
 * health state each means. Reasons are matched without their severity suffix (-report, -warning, -error).
 */
const STOPPED_BECAUSE: Readonly<Record<string, HealthState>> = {
  'cover-open': 'cover_open',
  'door-open': 'cover_open',
  'interlock-open': 'cover_open',
  'media-empty': 'paper_out',
  'media-needed': 'paper_out',
  'media-jam': 'paper_jam',
  paused: 'paused',
  'moving-to-paused': 'paused',
  shutdown: 'offline',
}
/** When a stopped printer gives several reasons, the first of these found wins; none of them: `error`. */
const STOPPED_PRIORITY: readonly HealthState[] = ['cover_open', 'paper_out', 'paper_jam', 'paused', 'offline']

const SEVERITY = /-(report|warning|error)$/

/**
 * Health from printer-state (RFC 8011 §5.4.11: idle, processing, stopped) and printer-state-reasons:
 * idle is `ready` (`paper_low` with media-low), processing is `busy` (likewise), stopped is what its
 * reasons say (paper, cover, jam, paused, shutdown) or else `error`. Reasons are the printer's keywords
 * less "none".
 */
export function ippPrinterHealth(
  printerState: string | null,
  stateReasons: string[],
  now: Date,
): PrinterHealth {
  const reasons = stateReasons
    .filter((reason) => reason !== 'none')
    .slice(0, MAX_REASONS)
    .map((reason) => reason.slice(0, MAX_REASON_LENGTH))
  const conditions = new Set(reasons.map((reason) => reason.replace(SEVERITY, '')))
  return { state: stateOf(printerState, conditions), reasons, checked_at: now.toISOString() }
}

function stateOf(printerState: string | null, conditions: Set<string>): HealthState {
  switch (printerState) {
    case 'idle':
      return conditions.has('media-low') ? 'paper_low' : 'ready'
    case 'processing':
      return conditions.has('media-low') ? 'paper_low' : 'busy'
    case 'stopped': {
      const states = new Set([...conditions].map((condition) => STOPPED_BECAUSE[condition]))
      return STOPPED_PRIORITY.find((state) => states.has(state)) ?? 'error'
    }
    default:
      return 'unknown'
  }
}

/**
 * Health of a printer that did not answer Get-Printer-Attributes: `offline` when it could not be reached
 * or did not answer in time, `error` when it answered but not as an IPP printer should (TLS, HTTP or IPP
 * status, garbage), each with one reason saying which.
 */
export function ippErrorHealth(error: IppError, now: Date = new Date()): PrinterHealth {
  const checked_at = now.toISOString()
  switch (error.kind) {
    case 'unreachable':
    case 'aborted':
      return { state: 'offline', reasons: ['transport_unreachable'], checked_at }
    case 'timeout':
      return { state: 'offline', reasons: ['transport_timeout'], checked_at }
    case 'tls':
      return { state: 'error', reasons: ['ipp_tls_failed'], checked_at }
    case 'http':
      return { state: 'error', reasons: [`ipp_http_${error.httpStatus}`], checked_at }
    case 'ipp_status':
      return { state: 'error', reasons: [`ipp_${error.ippStatus}`.slice(0, MAX_REASON_LENGTH)], checked_at }
    case 'malformed':
      return { state: 'error', reasons: ['ipp_malformed_reply'], checked_at }
  }
}
