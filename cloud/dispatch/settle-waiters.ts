import type { PrintJobStatus } from '../../protocol/enums.ts'

const POLL_MS = 200

interface Waiter {
  /** Ends the wait if the job has settled. */
  check(): void
  /** Ends the wait. */
  end(): void
}

/**
 * Lets a request wait until a job is no longer pending or reserved (a cancel waiting for its hub's answer).
 * Woken at once when this node applies a hub's report; it also reads the job every 200 ms, so that an answer
 * handled by another cloud node is seen too.
 */
export class SettleWaiters {
  readonly #statusOf: (printJobId: string) => Promise<PrintJobStatus | undefined>
  readonly #waiting = new Map<string, Set<Waiter>>()

  constructor(statusOf: (printJobId: string) => Promise<PrintJobStatus | undefined>) {
    this.#statusOf = statusOf
  }

  /** Resolves when the job left pending and reserved, or after `timeoutMs`. */
  wait(printJobId: string, timeoutMs: number): Promise<void> {
    return new Promise((resolve) => {
      const waiter: Waiter = {
        check: () => {
          this.#statusOf(printJobId).then(
            (status) => {
              if (status !== 'pending' && status !== 'reserved') waiter.end()
            },
            () => {
              // A busy database: the deadline still ends the wait.
            },
          )
        },
        end: () => {
          clearTimeout(deadline)
          clearInterval(poll)
          const set = this.#waiting.get(printJobId)
          set?.delete(waiter)
          if (set?.size === 0) this.#waiting.delete(printJobId)
          resolve()
        },
      }
      const deadline = setTimeout(waiter.end, timeoutMs)
      const poll = setInterval(waiter.check, POLL_MS)
      const set = this.#waiting.get(printJobId) ?? new Set()
      set.add(waiter)
      this.#waiting.set(printJobId, set)
    })
  }

  /** This node applied a change to the job: its waiters look again now. */
  changed(printJobId: string): void {
    for (const waiter of [...(this.#waiting.get(printJobId) ?? [])]) waiter.check()
  }

  /** Ends every wait (the cloud is stopping). */
  stop(): void {
    for (const set of [...this.#waiting.values()]) for (const waiter of [...set]) waiter.end()
  }
}
