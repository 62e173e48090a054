import type { HealthState } from '../../protocol/printer-health.ts'

/**
 * The machine-readable reasons the status parsers report, and the health state each one implies. Reasons
 * mapped to `null` are informational: they travel in `reasons` but do not change the state.
 */
export const REASON_STATES = {
  cover_open: 'cover_open',
  head_open: 'cover_open',
  paper_out: 'paper_out',
  paper_end_stop: 'paper_out',
  paper_jam: 'paper_jam',
  head_over_temperature: 'head_error',
  head_under_temperature: 'head_error',
  bad_printhead_element: 'head_error',
  printhead_detection_error: 'head_error',
  printhead_thermistor_open: 'head_error',
  cutter_error: 'cutter_error',
  ribbon_out: 'error',
  motor_over_temperature: 'error',
  mechanical_error: 'error',
  unrecoverable_error: 'error',
  auto_recoverable_error: 'error',
  error_reported: 'error',
  other_error: 'error',
  invalid_firmware_config: 'error',
  presenter_error: 'error',
  black_mark_error: 'error',
  printer_offline: 'offline',
  paused: 'paused',
  paper_near_end: 'paper_low',
  printing: 'busy',
  receive_buffer_full: 'busy',
  label_waiting: 'busy',
  // Informational only.
  waiting_for_online_recovery: null,
  paper_feed_button: null,
  battery_low: null,
  printer_reset: null,
  config_lost: null,
  clean_printhead: null,
  replace_printhead: null,
  calibrate_media: null,
  host_status_no_reply: null,
  incomplete_status_reply: null,
} as const satisfies Record<string, HealthState | null>

export type StatusReason = keyof typeof REASON_STATES

/**
 * When several conditions hold, the first state in this list wins: what stops printing outright comes
 * first; `paper_low` (still printable) and `busy` last. Anything else is `ready`.
 */
export const STATE_PRIORITY: readonly HealthState[] = [
  'cover_open',
  'paper_out',
  'paper_jam',
  'head_error',
  'cutter_error',
  'error',
  'offline',
  'paused',
  'paper_low',
  'busy',
]

/** The one state that sums up a set of reasons (see STATE_PRIORITY). */
export function stateOf(reasons: readonly StatusReason[]): HealthState {
  const states = new Set<HealthState>()
  for (const reason of reasons) {
    const state = REASON_STATES[reason]
    if (state !== null) states.add(state)
  }
  return STATE_PRIORITY.find((state) => states.has(state)) ?? 'ready'
}

/** Sets a reason for every bit of `byte` that `bits` names (bit number → reason). */
export function reasonsFromBits(byte: number, bits: Readonly<Record<number, StatusReason>>): StatusReason[] {
  const reasons: StatusReason[] = []
  for (const [bit, reason] of Object.entries(bits)) {
    if (byte & (1 << Number(bit))) reasons.push(reason)
  }
  return reasons
}

/** Reasons in first-seen order, each once. */
export function uniqueReasons(reasons: Iterable<StatusReason>): StatusReason[] {
  return [...new Set(reasons)]
}
