import type {
  AttemptOutcome,
  ClaimedDelivery,
  ClaimOptions,
  WebhookRepository,
} from '../../../cloud/storage/webhooks.ts'
import type { WebhookAttempt } from '../../../protocol/webhooks.ts'

export interface FakeEndpoint {
  endpointId: string
  accountId: string
  url: string
  sealedSecrets: string[]
  enabled: boolean
  failingSince: string | null
}

interface FakeDelivery {
  deliveryId: string
  endpointId: string
  event: ClaimedDelivery['event']
  state: 'pending' | 'delivered' | 'failed'
  attempts: number
  nextAttemptAtMs: number
  claimedUntilMs: number | null
  createdAtMs: number
}

export interface RecordedAttempt {
  deliveryId: string
  endpointId: string
  attempt: WebhookAttempt
  outcome: AttemptOutcome
  ignored: boolean
}

/**
 * The worker's side of WebhookRepository in memory, as its interface describes it: due pending deliveries of
 * enabled endpoints, oldest due first, leased, at most `perEndpoint` of an endpoint in flight (`perFailingEndpoint`
 * of a failing one); an attempt
 * recorded only under the claim's own lease; an endpoint disabled when it has failed since the threshold.
 */
export class FakeWebhooks
  implements Pick<WebhookRepository, 'claimDue' | 'keepPayload' | 'recordAttempt' | 'anyEnabledEndpoint'>
{
  readonly endpoints = new Map<string, FakeEndpoint>()
  readonly deliveries = new Map<string, FakeDelivery>()
  readonly payloads = new Map<string, string>()
  readonly recorded: RecordedAttempt[] = []
  claims = 0
  endpointLooks = 0
  #seq = 0

  addEndpoint(
    endpoint: Omit<FakeEndpoint, 'enabled' | 'failingSince' | 'accountId'> & Partial<FakeEndpoint>,
  ) {
    this.endpoints.set(endpoint.endpointId, {
      accountId: '5d0e8c7a-4c1b-4b8e-9f1a-0a1b2c3d4e5f',
      enabled: true,
      failingSince: null,
      ...endpoint,
    })
  }

  /** A delivery of a new `webhook.test` event (data {}), due at `dueMs`; its id. */
  addDelivery(
    endpointId: string,
    options: { dueMs?: number; attempts?: number; eventId?: string } = {},
  ): string {
    const n = ++this.#seq
    const deliveryId = `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`
    const dueMs = options.dueMs ?? Date.now()
    this.deliveries.set(deliveryId, {
      deliveryId,
      endpointId,
      event: {
        eventId: options.eventId ?? `10000000-0000-4000-8000-${String(n).padStart(12, '0')}`,
        type: 'webhook.test',
        subjectId: endpointId,
        occurredAt: new Date(dueMs).toISOString(),
        snapshot: '{}',
        payload: null,
      },
      state: 'pending',
      attempts: options.attempts ?? 0,
      nextAttemptAtMs: dueMs,
      claimedUntilMs: null,
      createdAtMs: dueMs,
    })
    return deliveryId
  }

  async anyEnabledEndpoint(): Promise<boolean> {
    this.endpointLooks += 1
    return [...this.endpoints.values()].some((endpoint) => endpoint.enabled)
  }

  attemptsOf(deliveryId: string): RecordedAttempt[] {
    return this.recorded.filter((r) => r.deliveryId === deliveryId)
  }

  async claimDue(
    nowMs: number,
    { limit, perEndpoint, perFailingEndpoint, leaseMs }: ClaimOptions,
  ): Promise<ClaimedDelivery[]> {
    this.claims += 1
    const leased = (d: FakeDelivery) => d.claimedUntilMs !== null && d.claimedUntilMs > nowMs
    const inFlight = new Map<string, number>()
    for (const d of this.deliveries.values())
      if (leased(d)) inFlight.set(d.endpointId, (inFlight.get(d.endpointId) ?? 0) + 1)
    const due = [...this.deliveries.values()]
      .filter((d) => d.state === 'pending' && d.nextAttemptAtMs <= nowMs && !leased(d))
      .filter((d) => this.endpoints.get(d.endpointId)?.enabled)
      .sort((a, b) => a.nextAttemptAtMs - b.nextAttemptAtMs)
    const claimed: ClaimedDelivery[] = []
    for (const d of due) {
      if (claimed.length === limit) break
      const taken = inFlight.get(d.endpointId) ?? 0
      const failing = (this.endpoints.get(d.endpointId)?.failingSince ?? null) !== null
      if (taken >= (failing ? (perFailingEndpoint ?? perEndpoint) : perEndpoint)) continue
      inFlight.set(d.endpointId, taken + 1)
      d.claimedUntilMs = nowMs + leaseMs
      const endpoint = this.endpoints.get(d.endpointId) as FakeEndpoint
      claimed.push({
        deliveryId: d.deliveryId,
        accountId: endpoint.accountId,
        endpointId: d.endpointId,
        url: endpoint.url,
        endpointFailing: endpoint.failingSince !== null,
        sealedSecrets: [...endpoint.sealedSecrets],
        attempts: d.attempts,
        claimedUntilMs: d.claimedUntilMs,
        createdAtMs: d.createdAtMs,
        event: { ...d.event, payload: this.payloads.get(d.event.eventId) ?? null },
      })
    }
    return claimed
  }

  async keepPayload(eventId: string, payload: string): Promise<string> {
    if (!this.payloads.has(eventId)) this.payloads.set(eventId, payload)
    return this.payloads.get(eventId) as string
  }

  async recordAttempt(
    claim: ClaimedDelivery,
    attempt: WebhookAttempt,
    outcome: AttemptOutcome,
  ): Promise<void> {
    const d = this.deliveries.get(claim.deliveryId)
    const ignored = d?.claimedUntilMs !== claim.claimedUntilMs
    this.recorded.push({
      deliveryId: claim.deliveryId,
      endpointId: claim.endpointId,
      attempt,
      outcome,
      ignored,
    })
    if (!d || ignored) return
    const endpoint = this.endpoints.get(d.endpointId) as FakeEndpoint
    d.attempts += 1
    d.claimedUntilMs = null
    d.state = outcome.state
    if (outcome.state === 'pending') d.nextAttemptAtMs = outcome.nextAttemptAtMs
    if (outcome.state === 'delivered') endpoint.failingSince = null
    else {
      endpoint.failingSince ??= outcome.at
      if (endpoint.failingSince <= outcome.disableIfFailingSince) endpoint.enabled = false
    }
  }
}
