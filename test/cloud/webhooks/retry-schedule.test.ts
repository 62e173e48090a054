import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import {
  afterFailure,
  disableIfFailingSince,
  type FailedAttempt,
  retryAfterMs,
  STANDARD_RETRY_SCHEDULE as SCHEDULE,
} from '../../../cloud/webhooks/retry-schedule.ts'

const HOUR = 3600_000
const T0 = Date.parse('2026-11-28T12:00:00Z')
const failure = (attempt: Partial<FailedAttempt>): FailedAttempt => ({
  attemptsMade: 1,
  firstDueMs: T0,
  nowMs: T0,
  statusCode: 500,
  random: 0.5,
  ...attempt,
})
const waitAfter = (attempt: Partial<FailedAttempt>) => {
  const outcome = afterFailure(SCHEDULE, failure(attempt))
  if (outcome.state !== 'pending') throw new Error('expected a retry')
  return outcome.nextAttemptAtMs - (attempt.nowMs ?? T0)
}

describe('the retry schedule', () => {
  it('waits 5 s, 5 min, 30 min, 2 h, 5 h, 10 h and 10 h (no jitter drawn), then gives up after 8 attempts', () => {
    const waits = [1, 2, 3, 4, 5, 6].map((attemptsMade) => waitAfter({ attemptsMade }))
    expect(waits).toEqual([5_000, 300_000, 1_800_000, 2 * HOUR, 5 * HOUR, 10 * HOUR])
    // The last retry: 10 h after the seventh attempt, which came 17.6 h after the first.
    const seventhAt = T0 + 17 * HOUR + 35 * 60_000 + 5_000
    expect(waitAfter({ attemptsMade: 7, nowMs: seventhAt })).toBe(10 * HOUR)
    expect(afterFailure(SCHEDULE, failure({ attemptsMade: 8 }))).toEqual({ state: 'failed' })
    expect(afterFailure(SCHEDULE, failure({ attemptsMade: 12 }))).toEqual({ state: 'failed' })
  })

  it('spreads each wait by at most 20 % either way', () => {
    expect(waitAfter({ attemptsMade: 2, random: 0 })).toBe(240_000)
    expect(waitAfter({ attemptsMade: 2, random: 0.999999 })).toBe(360_000 - 0)
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 6 }),
        fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
        (n, random) => {
          const base = SCHEDULE.retryDelaysMs[n - 1] as number
          const wait = waitAfter({ attemptsMade: n, random })
          return wait >= Math.round(base * 0.8) && wait <= Math.round(base * 1.2)
        },
      ),
    )
  })

  it('retries for at least a day after the delivery was first due, whatever the jitter drew', () => {
    fc.assert(
      fc.property(
        fc.array(fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }), {
          minLength: 7,
          maxLength: 7,
        }),
        (draws) => {
          let now = T0
          for (const [index, random] of draws.entries()) {
            const outcome = afterFailure(SCHEDULE, failure({ attemptsMade: index + 1, nowMs: now, random }))
            if (outcome.state !== 'pending') return false
            now = outcome.nextAttemptAtMs
          }
          return now - T0 >= 24 * HOUR && now - T0 <= 1.2 * 27.6 * HOUR
        },
      ),
    )
  })

  it('honours Retry-After on 429 and 503, never sooner than the schedule, capped at 10 h', () => {
    expect(waitAfter({ statusCode: 429, retryAfter: '120' })).toBe(120_000)
    expect(waitAfter({ statusCode: 503, retryAfter: '120' })).toBe(120_000)
    expect(waitAfter({ statusCode: 429, retryAfter: '1' })).toBe(5_000)
    expect(waitAfter({ statusCode: 429, retryAfter: String(7 * 24 * 3600) })).toBe(10 * HOUR)
    const date = new Date(T0 + 90_000).toUTCString()
    expect(waitAfter({ statusCode: 429, retryAfter: date })).toBe(90_000)
    // Only those statuses: a 500's Retry-After is not a request to come back then.
    expect(waitAfter({ statusCode: 500, retryAfter: '120' })).toBe(5_000)
    expect(waitAfter({ statusCode: null, retryAfter: '120' })).toBe(5_000)
  })

  it('reads Retry-After as delay-seconds or an HTTP-date (RFC 9110 §10.2.3), ignoring what is neither', () => {
    expect(retryAfterMs('30', T0)).toBe(30_000)
    expect(retryAfterMs(' 0 ', T0)).toBe(0)
    expect(retryAfterMs('Sat, 28 Nov 2026 12:01:00 GMT', T0)).toBe(60_000)
    expect(retryAfterMs('Saturday, 28-Nov-26 12:01:00 GMT', T0)).toBe(60_000) // RFC 850
    expect(retryAfterMs('Sat, 28 Nov 2026 11:00:00 GMT', T0)).toBe(0) // already past
    for (const bad of [undefined, '', '-5', '1.5', '30s', 'soon', '2026-11-28T12:01:00Z'])
      expect(retryAfterMs(bad, T0)).toBeUndefined()
  })

  it('disables an endpoint whose failures started five days ago or earlier', () => {
    expect(disableIfFailingSince(SCHEDULE, T0)).toBe('2026-11-23T12:00:00.000Z')
  })
})
