/**
 * When a failed delivery is tried again (docs/webhooks.md, "Retries"). Pure functions: the worker passes the
 * clock and the random number.
 */
export interface RetrySchedule {
  /** The wait before each retry; the first attempt is made as soon as the delivery is due. */
  retryDelaysMs: readonly number[]
  /** Each wait is spread by up to this fraction either way, so that retries of one outage do not come together. */
  jitter: number
  /** The last retry comes no sooner than this after the delivery was first due, whatever the jitter drew. */
  minimumRetryWindowMs: number
  /** A longer Retry-After is cut to this. */
  retryAfterCapMs: number
  /** An endpoint whose every delivery has failed for this long is disabled. */
  disableAfterFailingMs: number
}

const SECOND = 1000
const MINUTE = 60 * SECOND
const HOUR = 60 * MINUTE

/**
 * Svix's schedule (docs.svix.com/retries), which the Standard Webhooks libraries' users know: at once, then
 * 5 s, 5 min, 30 min, 2 h, 5 h, 10 h and 10 h, eight attempts over about 27.6 hours, and never less than a day.
 */
export const STANDARD_RETRY_SCHEDULE: RetrySchedule = {
  retryDelaysMs: [5 * SECOND, 5 * MINUTE, 30 * MINUTE, 2 * HOUR, 5 * HOUR, 10 * HOUR, 10 * HOUR],
  jitter: 0.2,
  minimumRetryWindowMs: 24 * HOUR,
  retryAfterCapMs: 10 * HOUR,
  disableAfterFailingMs: 5 * 24 * HOUR,
}

/** RFC 9110 §10.2.3 and RFC 6585 §4: the statuses whose Retry-After says when to come back. */
const RETRY_AFTER_STATUSES = new Set([429, 503])

export interface FailedAttempt {
  /** Attempts made so far, this one included (1 after the first). */
  attemptsMade: number
  /** When the delivery was first due. */
  firstDueMs: number
  nowMs: number
  /** The endpoint's status; null when no answer came (timeout, refused connection, refused address). */
  statusCode: number | null
  /** The answer's Retry-After header, if any. */
  retryAfter?: string | undefined
  /** A number in [0, 1), for the jitter. */
  random: number
}

export type FailureOutcome = { state: 'pending'; nextAttemptAtMs: number } | { state: 'failed' }

/** After a failed attempt: the time of the next one, or `failed` once the schedule's retries are used up. */
export function afterFailure(schedule: RetrySchedule, attempt: FailedAttempt): FailureOutcome {
  const retryIndex = attempt.attemptsMade - 1
  const base = schedule.retryDelaysMs[retryIndex]
  if (base === undefined) return { state: 'failed' }
  let delayMs = base * (1 + schedule.jitter * (2 * attempt.random - 1))
  if (attempt.statusCode !== null && RETRY_AFTER_STATUSES.has(attempt.statusCode)) {
    const asked = retryAfterMs(attempt.retryAfter, attempt.nowMs)
    if (asked !== undefined) delayMs = Math.max(delayMs, Math.min(asked, schedule.retryAfterCapMs))
  }
  let nextAttemptAtMs = attempt.nowMs + Math.round(delayMs)
  if (retryIndex === schedule.retryDelaysMs.length - 1)
    nextAttemptAtMs = Math.max(nextAttemptAtMs, attempt.firstDueMs + schedule.minimumRetryWindowMs)
  return { state: 'pending', nextAttemptAtMs }
}

/** The `failing_since` at or before which a failure disables the endpoint (WebhookRepository.recordAttempt). */
export function disableIfFailingSince(schedule: RetrySchedule, nowMs: number): string {
  return new Date(nowMs - schedule.disableAfterFailingMs).toISOString()
}

/**
 * Retry-After (RFC 9110 §10.2.3): `delay-seconds` (digits only) or an HTTP-date; the wait in milliseconds from
 * `nowMs` (0 for a date already past), or undefined when the header is absent or malformed.
 */
export function retryAfterMs(header: string | undefined, nowMs: number): number | undefined {
  const value = header?.trim()
  if (!value) return undefined
  if (/^\d+$/.test(value)) return Number(value) * SECOND
  // RFC 9110 §5.6.7: IMF-fixdate, or the obsolete RFC 850 and asctime forms, all of which Date.parse reads.
  if (!/^[A-Za-z]{3}/.test(value)) return undefined
  const at = Date.parse(value)
  return Number.isNaN(at) ? undefined : Math.max(0, at - nowMs)
}
