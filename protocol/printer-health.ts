import { type Static, Type } from 'typebox'

/**
 * What a printer reports about itself, as the hub read it. `unknown` means the printer did not answer a
 * status query (many cheap printers never do); it is not a fault, and jobs are still sent to it.
 */
export const HEALTH_STATES = [
  'ready',
  'busy',
  'paper_out',
  'paper_low',
  'cover_open',
  'paper_jam',
  'head_error',
  'cutter_error',
  'paused',
  'offline',
  'error',
  'unknown',
] as const
export type HealthState = (typeof HEALTH_STATES)[number]

/** States in which a job must wait (and finally fail) rather than be sent. */
export const BLOCKING_HEALTH_STATES = [
  'paper_out',
  'cover_open',
  'paper_jam',
  'paused',
] as const satisfies readonly HealthState[]
export type BlockingHealthState = (typeof BLOCKING_HEALTH_STATES)[number]
export const isBlocking = (state: HealthState): state is BlockingHealthState =>
  (BLOCKING_HEALTH_STATES as readonly HealthState[]).includes(state)

export const PrinterHealth = Type.Object(
  {
    state: Type.Enum(HEALTH_STATES, { title: 'HealthState' }),
    reasons: Type.Array(Type.String({ maxLength: 200 }), {
      maxItems: 40,
      description: 'machine-readable detail, e.g. "paper_near_end", "head_open"',
    }),
    checked_at: Type.String({ format: 'date-time', maxLength: 64 }),
  },
  { title: 'PrinterHealth', additionalProperties: false },
)
export type PrinterHealth = Static<typeof PrinterHealth>
