import { randomBytes, randomUUID } from 'node:crypto'
import { pino } from 'pino'
import { Value } from 'typebox/value'
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest'
import { JOB_RULES } from '../../../cloud/print-jobs/lifecycle.ts'
import { openStorage, type Storage } from '../../../cloud/storage/storage.ts'
import type { ClaimedDelivery } from '../../../cloud/storage/webhooks.ts'
import { DeliveryWorker, type DeliveryWorkerOptions } from '../../../cloud/webhooks/delivery-worker.ts'
import { storedEventSubjects } from '../../../cloud/webhooks/event-payload.ts'
import { STANDARD_RETRY_SCHEDULE } from '../../../cloud/webhooks/retry-schedule.ts'
import { newWebhookSecret, webhookSecretBox } from '../../../cloud/webhooks/secret-box.ts'
import { PrintJob } from '../../../protocol/print-job.ts'
import type { WebhookEventType } from '../../../protocol/webhooks.ts'
import { ENGINES } from '../storage/engines.ts'
import { shopWithPrintersOnHubs, storeJob } from '../storage/stored-jobs.ts'
import { startWebhookReceiver, type WebhookReceiver } from './receiver.ts'

const POLL = { timeout: 10_000, interval: 20 }
const JOB_EVENTS: WebhookEventType[] = [
  'print_job.pending',
  'print_job.reserved',
  'print_job.printing',
  'print_job.printed',
  'print_job.failed',
  'print_job.cancelled',
]

describe.each(ENGINES)('webhook deliveries from real storage on %s', (engine) => {
  const shop = shopWithPrintersOnHubs(engine)
  const box = webhookSecretBox(randomBytes(32))
  const secret = newWebhookSecret()
  /** Answers 500 to the first attempt of each event sent to /flaky. */
  const flakySeen = new Set<string>()
  let receiver: WebhookReceiver
  const workers: DeliveryWorker[] = []
  const extraStorages: Storage[] = []

  beforeAll(async () => {
    receiver = await startWebhookReceiver(
      () => secret,
      (delivery, res) => {
        const id = String(delivery.headers['webhook-id'])
        if (delivery.path === '/flaky' && !flakySeen.has(id)) {
          flakySeen.add(id)
          return res.writeHead(500).end()
        }
        res.writeHead(204).end()
      },
    )
  })
  afterEach(async () => {
    await Promise.all(workers.splice(0).map((w) => w.stop()))
    await Promise.all(extraStorages.splice(0).map((s) => s.close()))
    // Each test's endpoints alone take its events and are claimed.
    for (const endpoint of await storage().webhooks.listEndpoints(shop.accountId))
      await storage().webhooks.deleteEndpoint(shop.accountId, endpoint.webhook_endpoint_id)
    receiver.received.length = 0
    receiver.refused = 0
  })
  afterAll(async () => {
    await receiver.close()
  })

  const storage = () => shop.t.storage
  const startWorker = (on: Storage = storage(), options: Partial<DeliveryWorkerOptions> = {}) => {
    const worker = new DeliveryWorker({
      webhooks: on.webhooks,
      subjects: storedEventSubjects(on),
      secretBox: box,
      logger: pino({ level: 'silent' }),
      pollIntervalMs: 20,
      fetchSeams: receiver.fetchSeams,
      ...options,
    })
    workers.push(worker)
    worker.start()
    return worker
  }
  const createEndpoint = async (path: string, eventTypes = JOB_EVENTS) => {
    const endpointId = randomUUID()
    const made = await storage().webhooks.createEndpoint(
      shop.accountId,
      {
        endpointId,
        url: receiver.url(path),
        eventTypes,
        description: null,
        sealedSecret: box.seal(secret, endpointId),
      },
      new Date().toISOString(),
    )
    if (made === 'limit') throw new Error('limit')
    return endpointId
  }
  /** A job on the online printer taken to `printed` through the lifecycle's rules. */
  const printJob = async (on: Storage = storage()) => {
    const job = await storeJob(on, shop.accountId, shop.printerOf.online)
    const apply = (rule: keyof typeof JOB_RULES, change = {}) =>
      on.printJobs.apply(job.print_job_id, JOB_RULES[rule], change)
    await apply('offer', { offered_at: new Date().toISOString() })
    await apply('reserve', { reserved_at: new Date().toISOString() })
    await apply('start', { started_at: new Date().toISOString() })
    await apply('print', { completed_at: new Date().toISOString() })
    return job
  }
  const deliveriesOf = async (endpointId: string) =>
    (await storage().webhooks.listDeliveries(shop.accountId, endpointId, 100))?.data ?? []

  it('delivers every status a job entered, signed, with the job as it was at each change', async () => {
    const endpointId = await createEndpoint('/jobs')
    const job = await printJob()
    startWorker()
    await vi.waitFor(() => expect(receiver.received).toHaveLength(4), POLL)
    expect(receiver.refused).toBe(0)
    const byType = new Map(receiver.received.map((r) => [r.event.type, r.event]))
    expect([...byType.keys()].sort()).toEqual([
      'print_job.pending',
      'print_job.printed',
      'print_job.printing',
      'print_job.reserved',
    ])
    for (const [type, event] of byType) {
      expect(event.account_id).toBe(shop.accountId)
      expect(Value.Errors(PrintJob, event.data)).toEqual([])
      expect(event.data).toMatchObject({ print_job_id: job.print_job_id, status: type.split('.')[1] })
    }
    expect(byType.get('print_job.reserved')?.data).toMatchObject({ started_at: null, completed_at: null })
    expect(byType.get('print_job.printed')?.data).toEqual(
      await storage().printJobs.findById(shop.accountId, job.print_job_id),
    )
    await vi.waitFor(async () => {
      const deliveries = await deliveriesOf(endpointId)
      expect(deliveries.map((d) => [d.state, d.attempts])).toEqual(Array(4).fill(['delivered', 1]))
    }, POLL)
    const [delivery] = await deliveriesOf(endpointId)
    const attempts = await storage().webhooks.listAttempts(shop.accountId, delivery!.webhook_delivery_id)
    expect(attempts).toHaveLength(1)
    expect(attempts?.[0]).toMatchObject({ attempt: 1, status_code: 204, error: null })
    expect(receiver.received.find((r) => r.event.id === delivery!.event_id)?.headers['webhook-id']).toBe(
      delivery!.event_id,
    )
  })

  it('retries a 500 with the same bytes and id, and records both attempts', async () => {
    const endpointId = await createEndpoint('/flaky', ['print_job.printed'])
    await printJob()
    startWorker(storage(), {
      schedule: { ...STANDARD_RETRY_SCHEDULE, retryDelaysMs: [50], minimumRetryWindowMs: 0 },
    })
    await vi.waitFor(() => expect(receiver.received).toHaveLength(2), POLL)
    const [first, second] = receiver.received
    expect(second?.body).toBe(first?.body)
    expect(second?.headers['webhook-id']).toBe(first?.headers['webhook-id'])
    await vi.waitFor(async () => expect((await deliveriesOf(endpointId))[0]?.state).toBe('delivered'), POLL)
    const [delivery] = await deliveriesOf(endpointId)
    const attempts = await storage().webhooks.listAttempts(shop.accountId, delivery!.webhook_delivery_id)
    expect(attempts?.map((a) => [a.attempt, a.status_code, a.error])).toEqual([
      [1, 500, 'HTTP 500'],
      [2, 204, null],
    ])
  })

  it('leaves a delivery a dead node had claimed to another once its lease ran out, and ignores the dead claim', async () => {
    const endpointId = await createEndpoint('/jobs', ['print_job.printed'])
    await printJob()
    const claimedAt = Date.now()
    const [dead] = await storage().webhooks.claimDue(claimedAt, { limit: 1, perEndpoint: 2, leaseMs: 500 })
    expect(dead?.event.type).toBe('print_job.printed')
    startWorker()
    await vi.waitFor(() => expect(receiver.received).toHaveLength(1), POLL)
    expect(receiver.received[0]!.atMs).toBeGreaterThanOrEqual(claimedAt + 500)
    await vi.waitFor(async () => expect((await deliveriesOf(endpointId))[0]?.state).toBe('delivered'), POLL)
    const at = new Date().toISOString()
    await storage().webhooks.recordAttempt(
      dead!,
      {
        attempt: 1,
        attempted_at: at,
        duration_ms: 15_000,
        status_code: null,
        error: 'timeout after 15000 ms',
      },
      { state: 'pending', nextAttemptAtMs: Date.now(), disableIfFailingSince: at, at },
    )
    const [delivery] = await deliveriesOf(endpointId)
    expect(delivery).toMatchObject({ state: 'delivered', attempts: 1 })
  })

  it('records attempts that end together in one batch, each only under its own lease', async () => {
    const endpointId = await createEndpoint('/jobs', ['print_job.printed'])
    for (let i = 0; i < 3; i++) await printJob()
    // PostgreSQL's trigger rounds its clock to the millisecond: the last delivery may be due a moment from now.
    const nowMs = Date.now() + 1000
    const claims = await storage().webhooks.claimDue(nowMs, { limit: 3, perEndpoint: 3, leaseMs: 60_000 })
    expect(claims).toHaveLength(3)
    const [delivered, retrying, stale] = claims as [ClaimedDelivery, ClaimedDelivery, ClaimedDelivery]
    const at = new Date(nowMs).toISOString()
    const attempt = (statusCode: number) => ({
      attempt: 1,
      attempted_at: at,
      duration_ms: 3,
      status_code: statusCode,
      error: statusCode === 204 ? null : `HTTP ${statusCode}`,
    })
    const farPast = '2000-01-01T00:00:00.000Z'
    await Promise.all([
      storage().webhooks.recordAttempt(delivered, attempt(204), { state: 'delivered', at }),
      storage().webhooks.recordAttempt(retrying, attempt(503), {
        state: 'pending',
        nextAttemptAtMs: nowMs + 5000,
        disableIfFailingSince: farPast,
        at,
      }),
      // A claim whose lease another claim has since taken: nothing of it is written.
      storage().webhooks.recordAttempt({ ...stale, claimedUntilMs: stale.claimedUntilMs - 1 }, attempt(204), {
        state: 'delivered',
        at,
      }),
    ])
    const byId = new Map((await deliveriesOf(endpointId)).map((d) => [d.webhook_delivery_id, d]))
    expect(byId.get(delivered.deliveryId)).toMatchObject({
      state: 'delivered',
      attempts: 1,
      delivered_at: at,
    })
    expect(byId.get(retrying.deliveryId)).toMatchObject({
      state: 'pending',
      attempts: 1,
      delivered_at: null,
      next_attempt_at: new Date(nowMs + 5000).toISOString(),
    })
    expect(byId.get(stale.deliveryId)).toMatchObject({ state: 'pending', attempts: 0, delivered_at: null })
    const attemptsOf = async (deliveryId: string) =>
      (await storage().webhooks.listAttempts(shop.accountId, deliveryId))?.map((a) => a.status_code)
    expect(await attemptsOf(delivered.deliveryId)).toEqual([204])
    expect(await attemptsOf(retrying.deliveryId)).toEqual([503])
    expect(await attemptsOf(stale.deliveryId)).toEqual([])
    const endpoint = await storage().webhooks.findEndpoint(shop.accountId, endpointId)
    expect(endpoint).toMatchObject({ enabled: true, failing_since: at })
  })

  it.runIf(engine === 'postgres')('two nodes on one database deliver each event once', async () => {
    await createEndpoint('/jobs')
    const second = await openStorage(shop.t.settings)
    extraStorages.push(second)
    const one = startWorker(storage())
    const two = startWorker(second)
    const jobs = 25
    for (let i = 0; i < jobs; i++) await printJob(i % 2 === 0 ? storage() : second)
    await vi.waitFor(() => expect(receiver.received.length).toBeGreaterThanOrEqual(jobs * 4), POLL)
    await Promise.all([one.stop(), two.stop()])
    const ids = receiver.received.map((r) => r.event.id)
    expect(ids).toHaveLength(jobs * 4)
    expect(new Set(ids).size).toBe(jobs * 4)
  })
})
