import { describe, expect, it } from 'vitest'
import { nodeReconnectDelayMs } from '../../../cloud/broker/external-broker.ts'

describe("a cloud node's wait before connecting to its broker again", () => {
  it('doubles from 0.5 to 1 s, with jitter, and never exceeds 2 s however long the broker is away', () => {
    expect([1, 2, 3, 4, 20].map((failures) => nodeReconnectDelayMs(failures, () => 0))).toEqual([
      500, 1000, 1000, 1000, 1000,
    ])
    expect([1, 2, 3, 4, 20].map((failures) => nodeReconnectDelayMs(failures, () => 1))).toEqual([
      1000, 2000, 2000, 2000, 2000,
    ])
  })
})
