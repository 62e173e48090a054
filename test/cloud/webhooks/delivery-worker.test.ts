import { randomBytes } from 'node:crypto'
import type { IncomingMessage, ServerResponse } from 'node:http'
import { setTimeout as sleep } from 'node:timers/promises'
import { pino } from 'pino'
import { Webhook } from 'standardwebhooks'
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest'
import { connectTls } from '../../../cloud/fetch/safe-fetch.ts'
import { DeliveryWorker, type DeliveryWorkerOptions } from '../../../cloud/webhooks/delivery-worker.ts'
import type { EventSubjects } from '../../../cloud/webhooks/event-payload.ts'
import { newWebhookSecret, webhookSecretBox } from '../../../cloud/webhooks/secret-box.ts'
import { freePort } from '../../helpers/free-port.ts'
import { makeCertificate, startHttpsServer, type TestServer } from '../fetch/tls-fixture.ts'
import { FakeWebhooks } from './fake-webhooks.ts'

/** Test DNS: the receiver's names resolve to a public address (then connected to on 127.0.0.1). */
const NAMES: Record<string, string[]> = {
  'hooks.example.com': ['93.184.215.14'],
  'refused.example.com': ['93.184.215.15'],
  'intranet.example.com': ['10.0.0.5'],
}
const HOUR = 3600_000
const POLL = { timeout: 5000, interval: 10 }
const NO_SUBJECTS: EventSubjects = {
  printJob: async () => undefined,
  printer: async () => undefined,
  agent: async () => undefined,
}

interface Received {
  path: string
  headers: IncomingMessage['headers']
  body: string
  /** Whether the standardwebhooks library verified it with the endpoint's secret(s) the test gave. */
  verifiedWith: string[]
}

describe('DeliveryWorker, against a real HTTPS receiver on 127.0.0.1', () => {
  const certificate = makeCertificate('hooks.example.com', ['hooks.example.com', 'refused.example.com'])
  const box = webhookSecretBox(randomBytes(32))
  const secret = newWebhookSecret()
  const previousSecret = newWebhookSecret()
  let server: TestServer
  let closedPort: number
  const received: Received[] = []
  const hanging: ServerResponse[] = []
  let webhooks: FakeWebhooks
  let worker: DeliveryWorker | undefined
  let endpointSeq = 0

  const respond = (path: string, res: ServerResponse) => {
    if (path === '/ok') return res.writeHead(204).end()
    if (path === '/error') return res.writeHead(500).end('boom')
    if (path === '/busy') return res.writeHead(429, { 'retry-after': '120' }).end()
    if (path === '/moved') return res.writeHead(302, { location: 'https://hooks.example.com/ok' }).end()
    if (path === '/slow') return setTimeout(() => res.writeHead(200).end(), 300)
    if (path === '/hang') return hanging.push(res)
    res.writeHead(404).end()
  }

  beforeAll(async () => {
    server = await startHttpsServer(certificate, (req, res) => {
      const chunks: Buffer[] = []
      req.on('data', (chunk: Buffer) => chunks.push(chunk))
      req.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8')
        const headers = req.headers as Record<string, string>
        const verifiedWith = [secret, previousSecret].filter((s) => {
          try {
            new Webhook(s).verify(body, headers)
            return true
          } catch {
            return false
          }
        })
        received.push({ path: req.url ?? '', headers: req.headers, body, verifiedWith })
        respond(req.url ?? '', res)
      })
    })
    closedPort = await freePort()
  })
  afterEach(async () => {
    for (const res of hanging.splice(0)) res.destroy()
    await worker?.stop()
    worker = undefined
    received.length = 0
  })
  afterAll(async () => {
    await server.close()
  })

  const start = (options: Partial<DeliveryWorkerOptions> = {}) => {
    worker = new DeliveryWorker({
      webhooks,
      subjects: NO_SUBJECTS,
      secretBox: box,
      logger: pino({ level: 'silent' }),
      pollIntervalMs: 20,
      attemptTimeoutMs: 2000,
      random: () => 0.5,
      fetchSeams: {
        resolve: async (host) =>
          NAMES[host] ?? Promise.reject(Object.assign(new Error('nx'), { code: 'ENOTFOUND' })),
        connect: (target) =>
          connectTls(
            {
              ...target,
              address: '127.0.0.1',
              port: target.servername === 'refused.example.com' ? closedPort : server.port,
            },
            certificate.cert,
          ),
      },
      ...options,
    })
    worker.start()
    return worker
  }
  /** An endpoint at `url` signing with `secrets` (the current one by default); its id. */
  const endpoint = (url: string, secrets = [secret]) => {
    const endpointId = `e0000000-0000-4000-8000-${String(++endpointSeq).padStart(12, '0')}`
    webhooks.addEndpoint({ endpointId, url, sealedSecrets: secrets.map((s) => box.seal(s, endpointId)) })
    return endpointId
  }
  const settled = async (deliveryId: string, attempts = 1) => {
    await vi.waitFor(() => expect(webhooks.attemptsOf(deliveryId)).toHaveLength(attempts), POLL)
    return webhooks.attemptsOf(deliveryId).at(-1) as ReturnType<FakeWebhooks['attemptsOf']>[number]
  }

  it('POSTs the signed body once, records a 2xx as delivered, and keeps the body for every later send', async () => {
    webhooks = new FakeWebhooks()
    const id = webhooks.addDelivery(endpoint('https://hooks.example.com/ok'))
    const before = Date.now()
    start()
    const { attempt, outcome } = await settled(id)
    expect(received).toHaveLength(1)
    const [request] = received
    expect(request?.verifiedWith).toEqual([secret])
    expect(request?.headers).toMatchObject({
      'content-type': 'application/json',
      'user-agent': 'print-hub-webhooks/1',
      'webhook-id': webhooks.deliveries.get(id)?.event.eventId,
    })
    const eventId = webhooks.deliveries.get(id)?.event.eventId as string
    expect(JSON.parse(request?.body ?? '')).toEqual({
      id: eventId,
      type: 'webhook.test',
      timestamp: webhooks.deliveries.get(id)?.event.occurredAt,
      account_id: '5d0e8c7a-4c1b-4b8e-9f1a-0a1b2c3d4e5f',
      data: {},
    })
    expect(webhooks.payloads.get(eventId)).toBe(request?.body)
    expect(attempt).toMatchObject({ attempt: 1, status_code: 204, error: null })
    expect(Date.parse(attempt.attempted_at)).toBeGreaterThanOrEqual(before)
    expect(attempt.duration_ms).toBeGreaterThanOrEqual(0)
    expect(outcome.state).toBe('delivered')
    expect(webhooks.deliveries.get(id)?.state).toBe('delivered')
  })

  it('sends the kept body, not a new rendering, and signs with both secrets during a rotation', async () => {
    webhooks = new FakeWebhooks()
    const id = webhooks.addDelivery(endpoint('https://hooks.example.com/ok', [secret, previousSecret]))
    const eventId = webhooks.deliveries.get(id)?.event.eventId as string
    webhooks.payloads.set(eventId, '{"kept":true}')
    start()
    await settled(id)
    expect(received[0]?.body).toBe('{"kept":true}')
    expect(received[0]?.verifiedWith).toEqual([secret, previousSecret])
    expect(String(received[0]?.headers['webhook-signature']).split(' ')).toHaveLength(2)
  })

  it("opens an endpoint's sealed secrets once for all its deliveries", async () => {
    webhooks = new FakeWebhooks()
    const opened: string[] = []
    const counting = {
      seal: box.seal,
      open: (sealed: string, endpointId: string) => {
        opened.push(endpointId)
        return box.open(sealed, endpointId)
      },
    }
    const endpointId = endpoint('https://hooks.example.com/ok', [secret, previousSecret])
    const ids = [1, 2, 3].map(() => webhooks.addDelivery(endpointId))
    start({ secretBox: counting })
    for (const id of ids) await settled(id)
    expect(received.map((r) => r.verifiedWith)).toStrictEqual(ids.map(() => [secret, previousSecret]))
    expect(opened).toStrictEqual([endpointId, endpointId])
  })

  it('renders and keeps the body once for one event claimed for several endpoints together', async () => {
    webhooks = new FakeWebhooks()
    const eventId = '10000000-0000-4000-8000-0000000000aa'
    const ids = [1, 2, 3].map(() =>
      webhooks.addDelivery(endpoint('https://hooks.example.com/ok'), { eventId }),
    )
    const kept = vi.spyOn(webhooks, 'keepPayload')
    start()
    for (const id of ids) await settled(id)
    expect(received.map((r) => r.body)).toStrictEqual(Array(3).fill(webhooks.payloads.get(eventId)))
    expect(kept).toHaveBeenCalledTimes(1)
  })

  it('retries a 500 after 5 s, telling storage when to disable the endpoint', async () => {
    webhooks = new FakeWebhooks()
    const now = Date.parse('2026-11-28T12:00:00Z')
    const id = webhooks.addDelivery(endpoint('https://hooks.example.com/error'), { dueMs: now })
    start({ now: () => now })
    const { attempt, outcome } = await settled(id)
    expect(attempt).toMatchObject({ attempt: 1, status_code: 500, error: 'HTTP 500' })
    expect(outcome).toEqual({
      state: 'pending',
      nextAttemptAtMs: now + 5000,
      disableIfFailingSince: '2026-11-23T12:00:00.000Z',
      at: '2026-11-28T12:00:00.000Z',
    })
  })

  it('honours a 429’s Retry-After', async () => {
    webhooks = new FakeWebhooks()
    const now = Date.parse('2026-11-28T12:00:00Z')
    const id = webhooks.addDelivery(endpoint('https://hooks.example.com/busy'), { dueMs: now })
    start({ now: () => now })
    const { attempt, outcome } = await settled(id)
    expect(attempt).toMatchObject({ status_code: 429, error: 'HTTP 429' })
    expect(outcome).toMatchObject({ state: 'pending', nextAttemptAtMs: now + 120_000 })
  })

  it('does not follow a redirect: a 3xx is a failed attempt and its Location is never asked', async () => {
    webhooks = new FakeWebhooks()
    const id = webhooks.addDelivery(endpoint('https://hooks.example.com/moved'))
    start()
    const { attempt, outcome } = await settled(id)
    expect(attempt).toMatchObject({ status_code: 302, error: 'HTTP 302 (redirects are not followed)' })
    expect(outcome.state).toBe('pending')
    expect(received.map((r) => r.path)).toEqual(['/moved'])
  })

  it('records a timeout, a refused connection and a refused address, each with no status', async () => {
    webhooks = new FakeWebhooks()
    const hang = webhooks.addDelivery(endpoint('https://hooks.example.com/hang'))
    const refused = webhooks.addDelivery(endpoint('https://refused.example.com/hook'))
    const loopback = webhooks.addDelivery(endpoint('https://127.0.0.1/hook'))
    const intranet = webhooks.addDelivery(endpoint('https://intranet.example.com/hook'))
    const local = webhooks.addDelivery(endpoint('https://printers.localhost/hook'))
    start({ attemptTimeoutMs: 400 })
    const hung = await settled(hang)
    expect(hung.attempt).toMatchObject({ status_code: null, error: 'timeout after 400 ms' })
    expect(hung.attempt.duration_ms).toBeGreaterThanOrEqual(395)
    expect(hung.outcome.state).toBe('pending')
    expect((await settled(refused)).attempt).toMatchObject({ status_code: null, error: 'connection refused' })
    expect((await settled(loopback)).attempt.error).toBe('address refused: 127.0.0.1 is loopback')
    expect((await settled(intranet)).attempt.error).toBe('address refused: 10.0.0.5 is private')
    expect((await settled(local)).attempt.error).toBe(
      'address refused: printers.localhost is a local host name',
    )
    expect(received.map((r) => r.path)).toEqual(['/hang'])
  })

  it('fails a delivery whose last retry failed, and the endpoint is disabled once it has failed for 5 days', async () => {
    webhooks = new FakeWebhooks()
    const now = Date.parse('2026-11-28T12:00:00Z')
    const failing = endpoint('https://hooks.example.com/error')
    const endpointRow = webhooks.endpoints.get(failing)
    if (endpointRow) endpointRow.failingSince = '2026-11-23T11:59:59.000Z'
    const last = webhooks.addDelivery(failing, { dueMs: now - 28 * HOUR, attempts: 7 })
    const later = webhooks.addDelivery(failing, { dueMs: now + 1 })
    let clock = now
    start({ now: () => clock })
    const { attempt, outcome } = await settled(last)
    expect(attempt.attempt).toBe(8)
    expect(outcome).toMatchObject({ state: 'failed', disableIfFailingSince: '2026-11-23T12:00:00.000Z' })
    expect(webhooks.endpoints.get(failing)?.enabled).toBe(false)
    clock = now + 10
    const claims = webhooks.claims
    await vi.waitFor(() => expect(webhooks.claims).toBeGreaterThan(claims + 2), POLL)
    expect(webhooks.attemptsOf(later)).toEqual([])
  })

  it('never lets a hanging endpoint delay another endpoint’s delivery', async () => {
    webhooks = new FakeWebhooks()
    const dead = endpoint('https://hooks.example.com/hang')
    const deadDeliveries = [1, 2, 3, 4, 5].map((n) =>
      webhooks.addDelivery(dead, { dueMs: Date.now() - 1000 + n }),
    )
    const healthy = endpoint('https://hooks.example.com/ok')
    start({ attemptTimeoutMs: 10_000, perEndpoint: 2 })
    await vi.waitFor(() => expect(received.filter((r) => r.path === '/hang')).toHaveLength(2), POLL)
    const addedAt = Date.now()
    const id = webhooks.addDelivery(healthy)
    const { outcome } = await settled(id)
    expect(outcome.state).toBe('delivered')
    expect(Date.now() - addedAt).toBeLessThan(1000)
    // Two to the hanging endpoint (perEndpoint), the other three still waiting.
    expect(received.filter((r) => r.path === '/hang')).toHaveLength(2)
    expect(deadDeliveries.flatMap((d) => webhooks.attemptsOf(d))).toEqual([])
  })

  it('sends to an endpoint that is failing only perFailingEndpoint at a time', async () => {
    webhooks = new FakeWebhooks()
    const dead = endpoint('https://hooks.example.com/hang')
    const row = webhooks.endpoints.get(dead)
    if (row) row.failingSince = '2026-11-28T10:00:00.000Z'
    for (const n of [1, 2, 3, 4]) webhooks.addDelivery(dead, { dueMs: Date.now() - 1000 + n })
    start({ attemptTimeoutMs: 10_000, perEndpoint: 4, perFailingEndpoint: 1 })
    await vi.waitFor(() => expect(received.filter((r) => r.path === '/hang')).toHaveLength(1), POLL)
    const claims = webhooks.claims
    await vi.waitFor(() => expect(webhooks.claims).toBeGreaterThan(claims + 2), POLL)
    expect(received.filter((r) => r.path === '/hang')).toHaveLength(1)
  })

  it('claims on a job change only while an endpoint is enabled; the poll finds one enabled since', async () => {
    webhooks = new FakeWebhooks()
    const running = start({ pollIntervalMs: 400 })
    await vi.waitFor(() => expect(webhooks.endpointLooks).toBe(1), POLL)
    const quiet = webhooks.claims
    for (let i = 0; i < 5; i++) running.jobChanged()
    await sleep(20)
    expect(webhooks.claims).toBe(quiet)
    const id = webhooks.addDelivery(endpoint('https://hooks.example.com/ok'))
    running.jobChanged()
    const { outcome } = await settled(id)
    expect(outcome.state).toBe('delivered')
    await sleep(50)
    const before = webhooks.claims
    running.jobChanged()
    await sleep(20)
    expect(webhooks.claims).toBe(before + 1)
  })

  it('stops only once the attempts in flight are made and recorded', async () => {
    webhooks = new FakeWebhooks()
    const id = webhooks.addDelivery(endpoint('https://hooks.example.com/slow'))
    const running = start()
    await vi.waitFor(() => expect(received).toHaveLength(1), POLL)
    expect(running.inFlight).toBe(1)
    await running.stop()
    expect(webhooks.attemptsOf(id)).toHaveLength(1)
    expect(webhooks.attemptsOf(id)[0]?.attempt.status_code).toBe(200)
    const claims = webhooks.claims
    webhooks.addDelivery(endpoint('https://hooks.example.com/ok'))
    await new Promise((resolve) => setTimeout(resolve, 100))
    expect(webhooks.claims).toBe(claims)
  })

  it('records an attempt it could not send when the secret does not open under this key', async () => {
    webhooks = new FakeWebhooks()
    const endpointId = endpoint('https://hooks.example.com/ok')
    const row = webhooks.endpoints.get(endpointId)
    if (row) row.sealedSecrets = [webhookSecretBox(randomBytes(32)).seal(secret, endpointId)]
    const id = webhooks.addDelivery(endpointId)
    start()
    const { attempt, outcome } = await settled(id)
    expect(attempt.error).toMatch(/^not sent: the signing secret could not be opened/)
    expect(outcome.state).toBe('pending')
    expect(received).toEqual([])
  })
})
