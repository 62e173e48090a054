import pLimit, { type LimitFunction } from 'p-limit'
import type { Logger } from 'pino'

const MAX_DELAY_MS = 60_000
const MAX_ATTEMPTS = 20
/**
 * Handlers running at once. What they write and read of hubs is batched (cloud/storage/batched.ts, one
 * statement for the handlers waiting on the same kind of write), so this bounds the memory of a fleet's
 * messages waiting their turn rather than the database's load.
 */
const DEFAULT_CONCURRENCY = 256

/** The few fields of a hub message that identify it in a log line (never a credential: hubs send none). */
function summary(payload: object): Record<string, unknown> {
  const picked: Record<string, unknown> = {}
  for (const key of ['print_job_id', 'status', 'failure_reason', 'online', 'session', 'agent_version'])
    if (key in payload) picked[key] = (payload as Record<string, unknown>)[key]
  if ('printers' in payload && Array.isArray(payload.printers)) picked.printers = payload.printers.length
  return picked
}

/**
 * Runs the handler of a hub message so that its failure (a busy database, a full disk) is logged with the hub
 * and the message and never escapes, and handles the message again later with a doubling delay. Messages that
 * only matter while they are a hub's latest (presence, state) share a key: a retry yields to a newer message
 * with the same key. Others (job reports, each a compare-and-set) are all retried.
 *
 * At most `concurrency` handlers run at once, the others wait in arrival order: in a reconnect storm
 * thousands of hubs' messages arrive within seconds, and starting every handler at once queued tens of
 * thousands of queries on the database pool (whose queue alone then took 6% of the node’s time: measured,
 * multi-node benchmark) and left API requests behind them.
 */
export class HandlerRetry {
  readonly #logger: Logger
  readonly #baseMs: number
  readonly #latest = new Map<string, number>()
  readonly #timers = new Set<NodeJS.Timeout>()
  /** Attempts still running: stop() waits for them, so that none touches storage after it was closed. */
  readonly #running = new Set<Promise<void>>()
  readonly #limit: LimitFunction
  #generation = 0
  #stopped = false

  constructor(logger: Logger, baseMs = 1000, concurrency = DEFAULT_CONCURRENCY) {
    this.#logger = logger
    this.#baseMs = baseMs
    this.#limit = pLimit(concurrency)
  }

  run(topic: string, agentId: string, latestKey: string | null, payload: object, handle: () => unknown) {
    const generation = ++this.#generation
    if (latestKey !== null) this.#latest.set(latestKey, generation)
    return this.#track(() => this.#attempt({ topic, agentId, latestKey, payload, handle, generation }, 1))
  }

  /** Hub messages being handled or waiting their turn (not retries waiting for their delay). */
  get inProgress(): number {
    return this.#running.size
  }

  /**
   * Resolves once the attempts accepted so far, running or waiting their turn, have ended (not those accepted
   * later, nor retries waiting for their delay): every message received so far has been handled once.
   */
  async settled(): Promise<void> {
    await Promise.all(this.#running)
  }

  /** No further attempts; resolves once those already running have ended. */
  async stop(): Promise<void> {
    this.#stopped = true
    for (const timer of this.#timers) clearTimeout(timer)
    this.#timers.clear()
    await Promise.all(this.#running)
  }

  /** `attempt` never rejects: a failure is logged and retried. It runs when a turn is free. */
  #track(attempt: () => Promise<void>): Promise<void> {
    const running = this.#limit(attempt)
    this.#running.add(running)
    void running.then(() => this.#running.delete(running))
    return running
  }

  async #attempt(
    message: {
      topic: string
      agentId: string
      latestKey: string | null
      payload: object
      handle: () => unknown
      generation: number
    },
    attempt: number,
  ): Promise<void> {
    const { topic, agentId, latestKey, payload, handle, generation } = message
    // Only a retry yields to a newer message: a first attempt always runs, in arrival order, even when a newer
    // one came while it waited its turn (a hub's online presence followed by its old session's last will must
    // both be handled: the session they name decides, cloud/storage/agents.ts).
    if (this.#stopped || (attempt > 1 && latestKey !== null && this.#latest.get(latestKey) !== generation))
      return
    try {
      await handle()
      if (latestKey !== null && this.#latest.get(latestKey) === generation) this.#latest.delete(latestKey)
    } catch (error) {
      const log = { err: error, agent_id: agentId, topic, message: summary(payload), attempt }
      if (attempt >= MAX_ATTEMPTS) {
        this.#logger.error(log, 'hub message handler failed; giving up on this message')
        return
      }
      const delay = Math.min(MAX_DELAY_MS, this.#baseMs * 2 ** (attempt - 1))
      this.#logger.error({ ...log, retry_in_ms: delay }, 'hub message handler failed')
      const timer = setTimeout(() => {
        this.#timers.delete(timer)
        void this.#track(() => this.#attempt(message, attempt + 1))
      }, delay)
      timer.unref()
      this.#timers.add(timer)
    }
  }
}
