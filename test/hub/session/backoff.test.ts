import { describe, expect, it } from 'vitest'
import { Backoff } from '../../../hub/session/backoff.ts'

describe('reconnect backoff', () => {
  it('grows exponentially to its cap, with jitter inside the window', () => {
    const lowest = new Backoff(500, 8000, () => 0)
    const highest = new Backoff(500, 8000, () => 1)
    expect(Array.from({ length: 7 }, () => lowest.next())).toEqual([250, 250, 250, 250, 250, 250, 250])
    expect(Array.from({ length: 7 }, () => highest.next())).toEqual([500, 1000, 2000, 4000, 8000, 8000, 8000])
  })

  it('starts over after a successful connect', () => {
    const backoff = new Backoff(500, 8000, () => 1)
    backoff.next()
    backoff.next()
    backoff.reset()
    expect(backoff.next()).toBe(500)
  })

  it('spreads hubs that lost the broker at the same moment', () => {
    const delays = Array.from({ length: 200 }, () => new Backoff(500, 30_000).next())
    expect(new Set(delays).size).toBeGreaterThan(100)
  })
})
