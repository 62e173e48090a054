import { randomUUID } from 'node:crypto'
import path from 'node:path'
import Database from 'better-sqlite3'
import type { MqttClient } from 'mqtt'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { DATABASE_FILE } from '../../cloud/storage/storage.ts'
import type { HubPrinter, LanJob } from '../../protocol/hub-messages.ts'
import { PRINT_OPTION_DEFAULTS, type PrintJob } from '../../protocol/print-job.ts'
import { printerIdFor } from '../../protocol/printer-id.ts'
import { connectHub, enroll, seedAccount, startFullCloud } from './hub-link.ts'
import { ESCPOS_RECEIPT, RECEIPT_PRINTER } from './test-cloud.ts'

type FullCloud = Awaited<ReturnType<typeof startFullCloud>>

const POLL = { timeout: 10_000, interval: 10 }
const CREATE_FROM_BASE64 = '/api/v1/print-jobs/from-base64'

const printer = (key: string): HubPrinter => ({
  key,
  name: `Printer ${key}`,
  uri: `socket://127.0.0.1:9100?language=escpos&k=${key}`,
  languages: ['escpos'],
  capabilities: { ...RECEIPT_PRINTER, document_formats: ['raw'] },
  health: { state: 'ready', reasons: [], checked_at: new Date().toISOString() },
})

describe('jobs taken on a hub’s LAN, and Idempotency-Keys offered to hubs (docs/lan-printing.md)', () => {
  let full: FullCloud
  let seed: Awaited<ReturnType<typeof seedAccount>>
  let hub: { agent_id: string; credential: string }
  let otherHub: { agent_id: string; credential: string }
  let client: MqttClient
  let otherClient: MqttClient
  let otherAccountId: string
  const offers: Record<string, unknown>[] = []
  const printerId = () => printerIdFor(hub.agent_id, 'receipt-1')

  const api = async <T>(
    method: string,
    path: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ) => {
    const res = await fetch(`${full.url}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${seed.token}`,
        ...(body !== undefined && { 'content-type': 'application/json' }),
        ...headers,
      },
      ...(body !== undefined && { body: JSON.stringify(body) }),
    })
    return { status: res.status, body: (await res.json()) as T }
  }
  const receipt = () => ({
    printer_id: printerId(),
    document_base64: ESCPOS_RECEIPT.toString('base64'),
    document_format: 'raw',
    document_raw_language: 'escpos',
  })
  const publishAs = (on: MqttClient, agentId: string, topic: string, payload: object) =>
    on.publishAsync(`hubs/${agentId}/${topic}`, JSON.stringify({ v: 1, ...payload }), { qos: 1 })
  const handled = () => full.cloud.dispatcher.handled()
  /** What the API does not show of a job: read from the cloud's SQLite file beside it. */
  const row = async (id: string) => {
    const db = new Database(path.join(full.dataDir, DATABASE_FILE), { readonly: true })
    try {
      return db
        .prepare<
          [string],
          {
            status: string
            origin: string
            idempotency: string | null
            duplicate_of: string | null
            account_id: string
          }
        >(
          'SELECT status, origin, idempotency, duplicate_of, account_id FROM print_jobs WHERE print_job_id = ?',
        )
        .get(id)
    } finally {
      db.close()
    }
  }

  /** A LAN job as the hub reports it (protocol: lan-job), on the hub's receipt printer unless told. */
  const lanJob = (status: LanJob['status'], overrides: Partial<LanJob> = {}): LanJob => ({
    v: 1,
    print_job_id: randomUUID(),
    printer_id: printerId(),
    document: {
      document_id: randomUUID(),
      sha256: 'b'.repeat(64),
      size_bytes: ESCPOS_RECEIPT.length,
      format: 'raw',
      raw_language: 'escpos',
      mime_type: 'application/vnd.escpos',
      filename: 'order-1042.bin',
    },
    options: PRINT_OPTION_DEFAULTS,
    created_at: '2026-11-28T12:00:00.000Z',
    client_id: 'till-7',
    status,
    at: '2026-11-28T12:00:00.000Z',
    ...overrides,
  })

  beforeAll(async () => {
    full = await startFullCloud()
    seed = await seedAccount(full.cloud)
    hub = await enroll(full.url, seed.enrollmentToken)
    const second = await seedAccount(full.cloud, 'Other shop')
    otherAccountId = second.accountId
    otherHub = await enroll(full.url, second.enrollmentToken)
    client = await connectHub(full.mqttUrl, {
      clientId: hub.agent_id,
      username: hub.agent_id,
      password: hub.credential,
    })
    otherClient = await connectHub(full.mqttUrl, {
      clientId: otherHub.agent_id,
      username: otherHub.agent_id,
      password: otherHub.credential,
    })
    client.on('message', (_topic, payload) => offers.push(JSON.parse(payload.toString())))
    await client.subscribeAsync(`hubs/${hub.agent_id}/job-offer`, { qos: 1 })
    await publishAs(client, hub.agent_id, 'presence', { online: true, session: 's1' })
    await publishAs(client, hub.agent_id, 'state', {
      agent_version: '9.9.9',
      host: { hostname: 'pi', platform: 'linux', arch: 'arm64' },
      printers: [printer('receipt-1')],
    })
    await vi.waitFor(async () => {
      if (!(await full.cloud.storage.printers.locate(printerId())))
        throw new Error('printer not registered yet')
    }, POLL)
  })
  afterAll(async () => {
    client.end(true)
    otherClient.end(true)
    await full.close()
  })

  it('offers a job with the Idempotency-Key it was created with and the request’s fingerprint', async () => {
    const keyed = await api<PrintJob>('POST', CREATE_FROM_BASE64, receipt(), {
      'idempotency-key': 'order-1042',
    })
    const plain = await api<PrintJob>('POST', CREATE_FROM_BASE64, receipt())
    expect([keyed.status, plain.status]).toEqual([201, 201])
    await vi.waitFor(() => expect(offers.map((o) => o.print_job_id)).toContain(plain.body.print_job_id), POLL)
    const offerOf = (id: string) => offers.find((o) => o.print_job_id === id)
    expect(offerOf(keyed.body.print_job_id)?.idempotency).toEqual({
      endpoint: CREATE_FROM_BASE64,
      key: 'order-1042',
      fingerprint: expect.stringMatching(/^[0-9a-f]{64}$/),
    })
    expect(offerOf(plain.body.print_job_id)).not.toHaveProperty('idempotency')
    // The same request again is the same fingerprint: what the hub compares a LAN request with.
    const stored = await row(keyed.body.print_job_id)
    expect(JSON.parse(stored?.idempotency ?? 'null')).toEqual(offerOf(keyed.body.print_job_id)?.idempotency)
  })

  it('records a LAN job once, with the hub’s id for it, and shows it through the API as any job', async () => {
    const taken = lanJob('reserved', {
      idempotency: { endpoint: CREATE_FROM_BASE64, key: 'lan-1', fingerprint: 'c'.repeat(64) },
    })
    await publishAs(client, hub.agent_id, 'lan-job', taken)
    await publishAs(client, hub.agent_id, 'lan-job', taken)
    await handled()
    const { status, body } = await api<PrintJob>('GET', `/api/v1/print-jobs/${taken.print_job_id}`)
    expect(status).toBe(200)
    expect(body).toMatchObject({
      print_job_id: taken.print_job_id,
      document_id: taken.document.document_id,
      document_mime_type: 'application/vnd.escpos',
      document_format: 'raw',
      document_raw_language: 'escpos',
      printer_id: printerId(),
      status: 'reserved',
      created_at: taken.created_at,
      reserved_at: taken.created_at,
      origin: 'lan',
      duplicate_of: null,
    })
    expect(await row(taken.print_job_id)).toMatchObject({ origin: 'lan', account_id: seed.accountId })
    const list = await api<{ data: PrintJob[] }>('GET', '/api/v1/print-jobs?limit=100')
    expect(list.body.data.filter((job) => job.print_job_id === taken.print_job_id)).toHaveLength(1)
  })

  it('moves a LAN job only forward, whatever order its reports are handled in', async () => {
    const id = randomUUID()
    const at = (s: number) => `2026-11-28T12:00:0${s}.000Z`
    // The last report first (another node took it sooner), then the earlier ones.
    await publishAs(client, hub.agent_id, 'lan-job', lanJob('printed', { print_job_id: id, at: at(3) }))
    await handled()
    expect((await row(id))?.status).toBe('printed')
    await publishAs(client, hub.agent_id, 'lan-job', lanJob('reserved', { print_job_id: id, at: at(1) }))
    await publishAs(client, hub.agent_id, 'lan-job', lanJob('printing', { print_job_id: id, at: at(2) }))
    await handled()
    const { body } = await api<PrintJob>('GET', `/api/v1/print-jobs/${id}`)
    expect(body).toMatchObject({ status: 'printed', completed_at: at(3) })
  })

  it('cancels a LAN job the hub dropped unasked, and fails one the hub failed, with its reason', async () => {
    const dropped = lanJob('reserved')
    const failed = lanJob('reserved')
    await publishAs(client, hub.agent_id, 'lan-job', dropped)
    await publishAs(client, hub.agent_id, 'lan-job', failed)
    await handled()
    await publishAs(client, hub.agent_id, 'lan-job', { ...dropped, status: 'cancelled' })
    await publishAs(client, hub.agent_id, 'lan-job', {
      ...failed,
      status: 'failed',
      failure_reason: 'printer_paper_out',
      detail: 'no paper',
    })
    await handled()
    expect((await row(dropped.print_job_id))?.status).toBe('cancelled')
    const { body } = await api<PrintJob>('GET', `/api/v1/print-jobs/${failed.print_job_id}`)
    expect(body).toMatchObject({
      status: 'failed',
      failure_reason: 'printer_paper_out',
      failure_detail: 'no paper',
    })
  })

  it('refuses a LAN job on a printer of another hub, and one naming another account’s document', async () => {
    const foreign = lanJob('printed')
    await publishAs(otherClient, otherHub.agent_id, 'lan-job', foreign)
    await handled()
    expect(await row(foreign.print_job_id)).toBeUndefined()
    // A document another account uploaded to the cloud (retained): a hub may not name it for a job of its own.
    const theirs = {
      document_id: randomUUID(),
      document_mime_type: 'application/vnd.escpos',
      document_format: 'raw' as const,
      document_raw_language: 'escpos' as const,
      size_bytes: ESCPOS_RECEIPT.length,
      sha256: 'd'.repeat(64),
      filename: null,
      created_at: new Date().toISOString(),
    }
    expect(await full.cloud.storage.documents.insertWithinQuota(otherAccountId, theirs, 1 << 30)).toBe(true)
    const stolen = lanJob('reserved', {
      document: { ...lanJob('reserved').document, document_id: theirs.document_id },
    })
    await publishAs(client, hub.agent_id, 'lan-job', stolen)
    await handled()
    expect(await row(stolen.print_job_id)).toBeUndefined()
    expect(await full.cloud.storage.documents.findById(otherAccountId, theirs.document_id)).toMatchObject({
      document_id: theirs.document_id,
    })
  })

  it('cancels a cloud job the hub dropped because its request printed on the LAN, naming that job', async () => {
    const created = await api<PrintJob>('POST', CREATE_FROM_BASE64, receipt(), {
      'idempotency-key': 'order-77',
    })
    await vi.waitFor(
      () => expect(offers.map((o) => o.print_job_id)).toContain(created.body.print_job_id),
      POLL,
    )
    const printedOnLan = randomUUID()
    await publishAs(client, hub.agent_id, 'job-status', {
      print_job_id: created.body.print_job_id,
      status: 'cancelled',
      at: new Date().toISOString(),
      duplicate_of: printedOnLan,
    })
    await handled()
    expect(await row(created.body.print_job_id)).toMatchObject({
      status: 'cancelled',
      duplicate_of: printedOnLan,
    })
    const { body } = await api<PrintJob>('GET', `/api/v1/print-jobs/${created.body.print_job_id}`)
    expect(body).toMatchObject({ status: 'cancelled', origin: 'cloud', duplicate_of: printedOnLan })
  })

  it('cancels a cloud job its hub dropped because it was cancelled on the LAN', async () => {
    const created = await api<PrintJob>('POST', CREATE_FROM_BASE64, receipt())
    await vi.waitFor(
      () => expect(offers.map((o) => o.print_job_id)).toContain(created.body.print_job_id),
      POLL,
    )
    await publishAs(client, hub.agent_id, 'job-status', {
      print_job_id: created.body.print_job_id,
      status: 'cancelled',
      at: new Date().toISOString(),
      on_lan: true,
    })
    await handled()
    const { body } = await api<PrintJob>('GET', `/api/v1/print-jobs/${created.body.print_job_id}`)
    expect(body).toMatchObject({ status: 'cancelled', duplicate_of: null })
  })

  it('leaves a cloud job alone when its hub says it was dropped, unasked and not on the LAN', async () => {
    const created = await api<PrintJob>('POST', CREATE_FROM_BASE64, receipt())
    await vi.waitFor(
      () => expect(offers.map((o) => o.print_job_id)).toContain(created.body.print_job_id),
      POLL,
    )
    await publishAs(client, hub.agent_id, 'job-status', {
      print_job_id: created.body.print_job_id,
      status: 'cancelled',
      at: new Date().toISOString(),
    })
    await handled()
    expect((await row(created.body.print_job_id))?.status).not.toBe('cancelled')
  })

  it('leaves a cloud job alone when another hub says it dropped it as a duplicate', async () => {
    const created = await api<PrintJob>('POST', CREATE_FROM_BASE64, receipt(), {
      'idempotency-key': 'order-78',
    })
    await publishAs(otherClient, otherHub.agent_id, 'job-status', {
      print_job_id: created.body.print_job_id,
      status: 'cancelled',
      at: new Date().toISOString(),
      duplicate_of: randomUUID(),
    })
    await handled()
    expect((await row(created.body.print_job_id))?.status).not.toBe('cancelled')
  })
})
