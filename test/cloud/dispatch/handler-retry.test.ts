import pino from 'pino'
import { describe, expect, it } from 'vitest'
import { HandlerRetry } from '../../../cloud/dispatch/handler-retry.ts'

/** A handler that ends when told to. */
function gate() {
  let open = () => {}
  const opened = new Promise<void>((resolve) => {
    open = resolve
  })
  return { open, opened }
}

describe('hub message handling, settled', () => {
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
    await new Promise((resolve) => setTimeout(resolve, 20))
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
})
