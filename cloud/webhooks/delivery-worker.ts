import { performance } from 'node:perf_hooks'
import type { Logger } from 'pino'
import type { WebhookAttempt } from '../../protocol/webhooks.ts'
import type { AttemptOutcome, ClaimedDelivery, WebhookRepository } from '../storage/webhooks.ts'
import { type EventSubjects, renderEventBody } from './event-payload.ts'
import { postWebhook, type WebhookFetchSeams, type WebhookPostResult } from './post-webhook.ts'
import {
  afterFailure,
  disableIfFailingSince,
  type RetrySchedule,
  STANDARD_RETRY_SCHEDULE,
} from './retry-schedule.ts'
import { rememberingOpen, type WebhookSecretBox } from './secret-box.ts'
import { signDelivery } from './signing.ts'
import { WebhookConnections } from './webhook-connections.ts'

/** How an attempt ended, for metrics: the endpoint took it, it will be tried again, or its retries ran out. */
export type AttemptResultKind = 'delivered' | 'retrying' | 'failed'

export interface DeliveryObserver {
  attempted(result: AttemptResultKind, delivery: ClaimedDelivery, atMs: number): void
}

export interface DeliveryWorkerOptions {
  webhooks: Pick<WebhookRepository, 'claimDue' | 'keepPayload' | 'recordAttempt' | 'anyEnabledEndpoint'>
  subjects: EventSubjects
  secretBox: WebhookSecretBox
  logger: Logger
  schedule?: RetrySchedule
  /** One attempt, from DNS to the answer's headers (15 s, as Svix). */
  attemptTimeoutMs?: number
  /** How often the database is asked for due deliveries when nothing woke the worker sooner. */
  pollIntervalMs?: number
  /** Attempts this node makes at once. */
  maxInFlight?: number
  /** Deliveries claimed by one query. */
  claimBatch?: number
  /** Attempts in flight to one endpoint, over every node. */
  perEndpoint?: number
  /** Attempts in flight to an endpoint that is failing (its last attempt failed), over every node. */
  perFailingEndpoint?: number
  fetchSeams?: WebhookFetchSeams
  observer?: DeliveryObserver
  /** Epoch milliseconds; tests inject a clock. */
  now?: () => number
  /** [0, 1), for the retry jitter. */
  random?: () => number
}

const DEFAULTS = {
  attemptTimeoutMs: 15_000,
  pollIntervalMs: 250,
  // Deliveries a node makes per second are at most the attempts in flight over an attempt's time (Little's law),
  // and an attempt's time includes the batched claim, body and record around the POST (tens of milliseconds
  // beside dispatch): 64 in flight held a node to about 400 jobs' events a second while it dispatched 600, and
  // 32 to one endpoint held a backend whose one endpoint takes every job's events to 360 (docs/performance.md,
  // "Webhook deliveries"). 512 in flight cost more CPU than 256 (twice the connections to open) for nothing.
  maxInFlight: 256,
  claimBatch: 64,
  // A healthy endpoint may take half of a node's attempts (one backend's endpoint taking every job's events);
  // once an attempt has failed (a dead endpoint's 15 s timeouts), 8, so that dead endpoints never hold the
  // attempts the others need.
  perEndpoint: 128,
  perFailingEndpoint: 8,
}
/** A claim outlives its attempt by this much: the time to render the body and record the attempt. */
const LEASE_MARGIN_MS = 15_000
/** After a failed claim (the database is away), the next is asked this much later. */
const CLAIM_FAILURE_BACKOFF_MS = 1000

/**
 * Delivers webhook events, on every cloud node. It claims due deliveries (a lease: another node takes one only
 * once its lease has run out, so a node killed mid-delivery leaves it to the others), renders each event's body
 * once and keeps it, signs and POSTs it, and records the attempt and what follows: delivered, the next attempt's
 * time, or failed. Attempts run concurrently, at most `perEndpoint` to one endpoint and `perFailingEndpoint`
 * to one whose last attempt failed, so that a slow or dead endpoint holds at most that many of the node's
 * `maxInFlight` and never delays another's deliveries.
 */
export class DeliveryWorker {
  readonly #o: Required<
    Pick<
      DeliveryWorkerOptions,
      | 'attemptTimeoutMs'
      | 'pollIntervalMs'
      | 'maxInFlight'
      | 'claimBatch'
      | 'perEndpoint'
      | 'perFailingEndpoint'
      | 'schedule'
    >
  > &
    DeliveryWorkerOptions
  readonly #now: () => number
  readonly #random: () => number
  readonly #inFlight = new Set<Promise<void>>()
  #timer: NodeJS.Timeout | undefined
  #claiming: Promise<void> | undefined
  #claimAgain = false
  /** A claim asked for by attempts that ended, waiting out the pause below. */
  #afterAttempts: NodeJS.Timeout | undefined
  /** How long the last claim took: attempts that end wait that long before claiming again. */
  #lastClaimMs = 0
  #stopped = true
  /** Bodies being rendered, by event: an event's deliveries to several endpoints share one. */
  readonly #rendering = new Map<string, Promise<string>>()
  /** The endpoints' signing secrets, opened once each (secret-box.ts). */
  readonly #openSecret: (sealed: string, endpointId: string) => string
  /** Kept connections to the endpoints, for this worker's attempts (webhook-connections.ts). */
  #connections: WebhookConnections | undefined
  /**
   * No account had an enabled endpoint when last looked (at most once a poll interval, after a claim found
   * nothing): a job's change then makes no delivery, and jobChanged does not claim.
   */
  #noEndpoints = false
  #endpointsLookedAtMs = Number.NEGATIVE_INFINITY

  constructor(options: DeliveryWorkerOptions) {
    this.#o = { ...DEFAULTS, schedule: STANDARD_RETRY_SCHEDULE, ...options }
    this.#now = options.now ?? Date.now
    this.#random = options.random ?? Math.random
    this.#openSecret = rememberingOpen(options.secretBox)
  }

  /** The kept connections, made at start (again after a stop). */
  #newConnections(): WebhookConnections {
    this.#connections ??= new WebhookConnections(this.#o.fetchSeams, this.#o.maxInFlight)
    return this.#connections
  }

  /** Attempts being made now. */
  get inFlight(): number {
    return this.#inFlight.size
  }

  start(): void {
    this.#stopped = false
    this.#newConnections()
    this.nudge()
  }

  /** Looks for due deliveries now rather than at the next poll (a test event was queued, an attempt ended). */
  nudge(): void {
    if (this.#stopped) return
    clearTimeout(this.#timer)
    this.#timer = undefined
    if (this.#claiming !== undefined) {
      this.#claimAgain = true // what woke it may have come after that claim's query
      return
    }
    this.#claimAgain = false
    this.#claiming = this.#claim().finally(() => {
      this.#claiming = undefined
    })
  }

  /**
   * A job's status changed (its events are written with it): claims now, unless no endpoint was enabled when
   * last looked. Then the poll finds what an endpoint enabled since (on this node or another) is due, within a
   * poll interval or two; an idle worker no longer asks the database after every change of every job.
   */
  jobChanged(): void {
    if (!this.#noEndpoints) this.nudge()
  }

  /** Takes no more deliveries, and waits for the attempts in flight to be made and recorded. */
  async stop(): Promise<void> {
    this.#stopped = true
    clearTimeout(this.#timer)
    clearTimeout(this.#afterAttempts)
    await this.#claiming
    await Promise.all(this.#inFlight)
    this.#connections?.destroy()
    this.#connections = undefined
  }

  async #claim(): Promise<void> {
    const started = performance.now()
    let nextPollMs = this.#o.pollIntervalMs
    let failed = false
    try {
      const room = Math.min(this.#o.maxInFlight - this.#inFlight.size, this.#o.claimBatch)
      if (room > 0) {
        const claims = await this.#o.webhooks.claimDue(this.#now(), {
          limit: room,
          perEndpoint: this.#o.perEndpoint,
          perFailingEndpoint: Math.min(this.#o.perFailingEndpoint, this.#o.perEndpoint),
          leaseMs: this.#o.attemptTimeoutMs + LEASE_MARGIN_MS,
        })
        for (const claim of claims) this.#track(this.#deliver(claim))
        if (claims.length === room) nextPollMs = 0 // more may be due
        if (claims.length > 0) this.#noEndpoints = false
        else await this.#lookForEndpoints()
      }
    } catch (err) {
      this.#o.logger.error({ err }, 'claiming webhook deliveries failed; trying again shortly')
      nextPollMs = Math.max(nextPollMs, CLAIM_FAILURE_BACKOFF_MS)
      failed = true
    }
    this.#lastClaimMs = performance.now() - started
    if (this.#stopped) return
    if (this.#claimAgain && !failed) nextPollMs = Math.min(nextPollMs, this.#lastClaimMs)
    this.#timer = setTimeout(() => this.nudge(), nextPollMs)
    this.#timer.unref()
  }

  async #lookForEndpoints(): Promise<void> {
    const nowMs = this.#now()
    if (nowMs - this.#endpointsLookedAtMs < this.#o.pollIntervalMs) return
    this.#endpointsLookedAtMs = nowMs
    this.#noEndpoints = !(await this.#o.webhooks.anyEnabledEndpoint())
  }

  #track(attempt: Promise<void>): void {
    this.#inFlight.add(attempt)
    void attempt.finally(() => {
      this.#inFlight.delete(attempt)
      this.#claimSoon()
    })
  }

  /**
   * A slot is free: a delivery that waited for one (its endpoint's, or the node's) may go now. The claim waits
   * as long as the last one took, so that the attempts ending meanwhile are claimed for together: one claim per
   * ended attempt would spend the node's time claiming (on SQLite a claim holds the event loop).
   */
  #claimSoon(): void {
    if (this.#stopped) return
    if (this.#claiming !== undefined) {
      this.#claimAgain = true
      return
    }
    if (this.#afterAttempts !== undefined) return
    this.#afterAttempts = setTimeout(() => {
      this.#afterAttempts = undefined
      this.nudge()
    }, this.#lastClaimMs)
    this.#afterAttempts.unref()
  }

  async #deliver(claim: ClaimedDelivery): Promise<void> {
    const { logger } = this.#o
    const log = { webhook_delivery_id: claim.deliveryId, webhook_endpoint_id: claim.endpointId }
    try {
      const { result, attemptedAtMs, durationMs } = await this.#send(claim)
      const attempt: WebhookAttempt = {
        attempt: claim.attempts + 1,
        attempted_at: new Date(attemptedAtMs).toISOString(),
        duration_ms: durationMs,
        status_code: 'statusCode' in result ? result.statusCode : null,
        error: errorOf(result),
      }
      const endedAtMs = this.#now()
      const outcome = this.#outcome(claim, result, endedAtMs)
      await this.#o.webhooks.recordAttempt(claim, attempt, outcome)
      const kind: AttemptResultKind = outcome.state === 'pending' ? 'retrying' : outcome.state
      this.#o.observer?.attempted(kind, claim, endedAtMs)
      if (kind !== 'delivered')
        logger.info(
          { ...log, attempt: attempt.attempt, error: attempt.error },
          `webhook attempt failed (${kind})`,
        )
    } catch (err) {
      // The lease runs out and this node or another tries again.
      logger.error({ ...log, err }, 'webhook delivery attempt could not be made or recorded')
    }
  }

  /**
   * Renders (once per event), signs and posts: the answer, when the POST began and how long it took. What could
   * not be sent is a failed attempt too.
   */
  async #send(
    claim: ClaimedDelivery,
  ): Promise<{ result: WebhookPostResult; attemptedAtMs: number; durationMs: number }> {
    let secrets: string[]
    try {
      secrets = claim.sealedSecrets.map((sealed) => this.#openSecret(sealed, claim.endpointId))
    } catch {
      const error =
        'not sent: the signing secret could not be opened (WEBHOOK_SECRET_KEY differs between nodes?)'
      return { result: { error }, attemptedAtMs: this.#now(), durationMs: 0 }
    }
    const body = claim.event.payload ?? (await this.#render(claim))
    const attemptedAtMs = this.#now()
    const headers = signDelivery(claim.event.eventId, body, secrets, new Date(attemptedAtMs))
    const started = performance.now()
    const result = await postWebhook(
      { url: claim.url, body, headers, timeoutMs: this.#o.attemptTimeoutMs },
      this.#o.fetchSeams ?? {},
      this.#connections ?? this.#newConnections(),
    )
    return { result, attemptedAtMs, durationMs: Math.round(performance.now() - started) }
  }

  /** The event's body rendered and kept, once for the deliveries of one event claimed together. */
  #render(claim: ClaimedDelivery): Promise<string> {
    const { eventId } = claim.event
    let body = this.#rendering.get(eventId)
    if (body === undefined) {
      body = renderEventBody(claim, this.#o.subjects).then((rendered) =>
        this.#o.webhooks.keepPayload(eventId, rendered),
      )
      this.#rendering.set(eventId, body)
      const forget = () => this.#rendering.delete(eventId)
      body.then(forget, forget)
    }
    return body
  }

  #outcome(claim: ClaimedDelivery, result: WebhookPostResult, nowMs: number): AttemptOutcome {
    const at = new Date(nowMs).toISOString()
    if ('statusCode' in result && result.statusCode >= 200 && result.statusCode <= 299)
      return { state: 'delivered', at }
    const { schedule } = this.#o
    const next = afterFailure(schedule, {
      attemptsMade: claim.attempts + 1,
      firstDueMs: claim.createdAtMs,
      nowMs,
      statusCode: 'statusCode' in result ? result.statusCode : null,
      retryAfter: 'retryAfter' in result ? result.retryAfter : undefined,
      random: this.#random(),
    })
    const disableIf = disableIfFailingSince(schedule, nowMs)
    return next.state === 'pending'
      ? { state: 'pending', nextAttemptAtMs: next.nextAttemptAtMs, disableIfFailingSince: disableIf, at }
      : { state: 'failed', disableIfFailingSince: disableIf, at }
  }
}

function errorOf(result: WebhookPostResult): string | null {
  if ('error' in result) return result.error
  if (result.statusCode >= 200 && result.statusCode <= 299) return null
  if (result.statusCode >= 300 && result.statusCode <= 399)
    return `HTTP ${result.statusCode} (redirects are not followed)`
  return `HTTP ${result.statusCode}`
}
