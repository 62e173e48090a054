import pino from 'pino'
import { describe, expect, it } from 'vitest'
import { HandlerRetry } from '../../../cloud/broker/handler-retry.ts'

/** A handler that ends when told to. */
function gate() {
  let open = () => {}
  const opened = new Promise<void>((resolve) => {
    open = resolve
  })
  return { open, opened }
}

/**
 * Resolves once every microtask queued before has run: HandlerRetry starts handlers and settles in microtasks
 * (p-limit), so a handler that could start has started by then, and a settle that could resolve has.
 */
const microtasksRun = () => new Promise((resolve) => setImmediate(resolve))

describe('hub message handling', () => {
  it('waits for the handlers running when asked, not for those that start later', async () => {
    const retry = new HandlerRetry(pino({ level: 'silent' }))
    const first = gate()
    const later = gate()
    const ended: string[] = []
    void retry.run('presence', 'hub-a', 'hub-a/presence', {}, async () => {
      await first.opened
      ended.push('first')
    })
    let settled = false
    const done = retry.settled().then(() => {
      settled = true
    })
    void retry.run('state', 'hub-b', 'hub-b/state', {}, async () => {
      await later.opened
      ended.push('later')
    })
    await microtasksRun()
    expect(settled).toBe(false)
    first.open()
    await done
    expect(ended).toEqual(['first'])
    later.open()
    await retry.stop()
    expect(ended).toEqual(['first', 'later'])
  })

  it('does not wait for a failed handler’s retry', async () => {
    const retry = new HandlerRetry(pino({ level: 'silent' }), 60_000)
    let attempts = 0
    void retry.run('job-ack', 'hub-a', null, {}, () => {
      attempts++
      throw new Error('database busy')
    })
    await retry.settled()
    expect(attempts).toBe(1)
    await retry.stop()
  })

  it('runs at most its concurrency of handlers at once, the others in arrival order', async () => {
    const retry = new HandlerRetry(pino({ level: 'silent' }), 1000, 2)
    const gates = [gate(), gate(), gate(), gate()]
    const started: number[] = []
    gates.forEach((g, i) => {
      void retry.run('job-ack', `hub-${i}`, null, {}, async () => {
        started.push(i)
        await g.opened
      })
    })
    await microtasksRun()
    expect(started).toEqual([0, 1])
    gates[1]!.open()
    await microtasksRun()
    expect(started).toEqual([0, 1, 2])
    gates[0]!.open()
    gates[2]!.open()
    gates[3]!.open()
    await retry.settled()
    expect(started).toEqual([0, 1, 2, 3])
    await retry.stop()
  })

  it('handles every waiting presence in arrival order, also one a newer message of its hub follows', async () => {
    const retry = new HandlerRetry(pino({ level: 'silent' }), 1000, 1)
    const busy = gate()
    const handled: string[] = []
    void retry.run('job-ack', 'hub-a', null, {}, () => busy.opened)
    // The hub's new session said online, then its old session's last will arrived: both count.
    for (const presence of ['online s2', 'offline s1'])
      void retry.run('presence', 'hub-b', 'hub-b/presence', { presence }, () => {
        handled.push(presence)
      })
    busy.open()
    await retry.settled()
    expect(handled).toEqual(['online s2', 'offline s1'])
    await retry.stop()
  })
})
