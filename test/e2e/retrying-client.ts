import { setTimeout as sleep } from 'node:timers/promises'
import type { Dispatcher } from 'undici'
import type { ErrorBody } from '../../protocol/errors.ts'
import type { PrintJob } from '../../protocol/print-job.ts'

/** One HTTP exchange: an answer, or `null` when none came (refused, reset, timed out). */
export interface Answer<T> {
  status: number
  body: T
  replayed: boolean
}

/** Answers a careful backend retries: the cloud is restarting, overloaded or still busy with the same key. */
function comeBackLater(answer: Answer<unknown>): boolean {
  if (answer.status >= 500 || answer.status === 429) return true
  const code = (answer.body as Partial<ErrorBody> | null)?.error_code
  return answer.status === 409 && code === 'idempotency_request_in_progress'
}

export interface RetryFigures {
  /** Create attempts sent again (no answer, 5xx, 429, or the key still in progress). */
  createRetries: number
  /** Creates answered with `Idempotent-Replayed: true`. */
  replays: number
  cancelRetries: number
  /** Creates the hub's LAN API took because the cloud gave no answer (docs/lan-printing.md). */
  lanCreates: number
}

/** The hub's LAN API a till falls back to, with the same token and key: its URL and TLS pinned to its certificate. */
export interface LanFallback {
  url: string
  dispatcher: Dispatcher
}

/**
 * A backend that never gives up on a request and never makes a second job by retrying: every create carries
 * an Idempotency-Key and is sent again with the same key until it gets a final answer; a cancel (which is
 * idempotent by nature) is sent again the same way. Gives up only at `deadline` (epoch ms).
 */
export class RetryingClient {
  readonly figures: RetryFigures = { createRetries: 0, replays: 0, cancelRetries: 0, lanCreates: 0 }

  constructor(
    private readonly baseUrl: string,
    private readonly token: string,
    private readonly deadline: number,
    private readonly lan?: LanFallback,
  ) {}

  /** One attempt; `null` if no answer came. The timeout exceeds the cloud's longest wait (an in-progress key). */
  async send<T>(
    method: string,
    path: string,
    body?: unknown,
    key?: string,
    via: 'cloud' | 'lan' = 'cloud',
  ): Promise<Answer<T> | null> {
    const lan = via === 'lan' ? this.lan : undefined
    try {
      const res = await fetch(`${lan ? lan.url : this.baseUrl}${path}`, {
        ...(lan && { dispatcher: lan.dispatcher }),
        method,
        headers: {
          authorization: `Bearer ${this.token}`,
          ...(body !== undefined && { 'content-type': 'application/json' }),
          ...(key !== undefined && { 'idempotency-key': key }),
        },
        ...(body !== undefined && { body: JSON.stringify(body) }),
        signal: AbortSignal.timeout(90_000),
      })
      const text = await res.text()
      let parsed: unknown = null
      try {
        parsed = JSON.parse(text)
      } catch {
        parsed = { error: 'not_json', error_code: 'not_json', message: text.slice(0, 200) }
      }
      return {
        status: res.status,
        body: parsed as T,
        replayed: res.headers.get('idempotent-replayed') === 'true',
      }
    } catch {
      return null
    }
  }

  /**
   * Sends until an answer that is not "come back later"; `attempts` counts what was sent. With `fallBack`, an
   * attempt the cloud gave no answer to is sent at once to the hub's LAN API, with the same key, as a till does.
   */
  async #persist<T>(
    method: string,
    path: string,
    body: unknown,
    key: string | undefined,
    onRetry: () => void,
    via: 'cloud' | 'lan' | 'fall-back' = 'cloud',
  ): Promise<{ answer: Answer<T>; attempts: number; unanswered: number; via: 'cloud' | 'lan' }> {
    let unanswered = 0
    for (let attempt = 1; ; attempt++) {
      const first = via === 'lan' ? 'lan' : 'cloud'
      let answer = await this.send<T>(method, path, body, key, first)
      let answeredBy: 'cloud' | 'lan' = first
      if (!answer && via === 'fall-back' && this.lan) {
        answer = await this.send<T>(method, path, body, key, 'lan')
        answeredBy = 'lan'
      }
      if (answer && !comeBackLater(answer)) return { answer, attempts: attempt, unanswered, via: answeredBy }
      if (!answer) unanswered++
      if (Date.now() > this.deadline)
        throw new Error(`${method} ${path} (key ${key}) got no final answer before the deadline`)
      onRetry()
      await sleep(Math.min(1000, 25 * 2 ** Math.min(attempt, 6)) + Math.floor(Math.random() * 25))
    }
  }

  /** Creates a job from Base64, retrying with the same key; a non-201 final answer is an error. */
  async create(body: Record<string, unknown>, key: string) {
    const { answer, attempts, via } = await this.#persist<PrintJob>(
      'POST',
      '/api/v1/print-jobs/from-base64',
      body,
      key,
      () => this.figures.createRetries++,
      'fall-back',
    )
    if (answer.replayed) this.figures.replays++
    if (via === 'lan') this.figures.lanCreates++
    if (answer.status !== 201)
      throw new Error(`create (key ${key}) answered ${answer.status}: ${JSON.stringify(answer.body)}`)
    return { job: answer.body, replayed: answer.replayed, attempts, via }
  }

  /**
   * Cancels, retrying until an answer; `unanswered` says whether an earlier attempt may have acted. A job
   * created on the hub's LAN is cancelled there (the cloud learns of it only once the hub reports it).
   */
  async cancel(printJobId: string, via: 'cloud' | 'lan' = 'cloud') {
    const { answer, unanswered } = await this.#persist<PrintJob & Partial<ErrorBody>>(
      'POST',
      `/api/v1/print-jobs/${printJobId}/cancel`,
      undefined,
      undefined,
      () => this.figures.cancelRetries++,
      via,
    )
    return { answer, unanswered }
  }
}
