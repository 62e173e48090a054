import { createHash } from 'node:crypto'
import type { MqttClient } from 'mqtt'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { hashSecret } from '../../print-api/secrets.ts'
import { type HubPrinter, OFFER_CONTENT_MAX_BYTES } from '../../protocol/hub-messages.ts'
import type { PrintJob } from '../../protocol/print-job.ts'
import { printerIdFor } from '../../protocol/printer-id.ts'
import { connectHub, enroll, seedAccount, startFullCloud } from './hub-link.ts'
import { ESCPOS_RECEIPT, RECEIPT_PRINTER } from './test-cloud.ts'

type FullCloud = Awaited<ReturnType<typeof startFullCloud>>

/** Waits on a busy machine are for a sign, not for time: the timeout only bounds a test that fails. */
const POLL = { timeout: 10_000, interval: 10 }

const printer = (key: string): HubPrinter => ({
  key,
  name: `Printer ${key}`,
  uri: `socket://127.0.0.1:9100?language=escpos&k=${key}`,
  languages: ['escpos'],
  capabilities: { ...RECEIPT_PRINTER, document_formats: ['raw'] },
  health: { state: 'ready', reasons: [], checked_at: new Date().toISOString() },
})

describe('the dispatcher and the agent API, with an MQTT client standing in for a hub', () => {
  let full: FullCloud
  let seed: Awaited<ReturnType<typeof seedAccount>>
  let hub: { agent_id: string; credential: string }
  let client: MqttClient
  const messages: { topic: string; payload: Record<string, unknown> }[] = []
  let answerCancel: 'cancelled' | 'printing' | null = null
  const printerId = () => printerIdFor(hub.agent_id, 'receipt-1')

  const api = async <T>(method: string, path: string, body?: unknown) => {
    const res = await fetch(`${full.url}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${seed.token}`,
        ...(body !== undefined && { 'content-type': 'application/json' }),
      },
      ...(body !== undefined && { body: JSON.stringify(body) }),
    })
    return { status: res.status, body: (await res.json()) as T }
  }
  const createJob = async () =>
    (
      await api<PrintJob>('POST', '/api/v1/print-jobs/from-base64', {
        printer_id: printerId(),
        document_base64: ESCPOS_RECEIPT.toString('base64'),
        document_format: 'raw',
        document_raw_language: 'escpos',
      })
    ).body
  const publish = (topic: string, payload: object) =>
    client.publishAsync(`hubs/${hub.agent_id}/${topic}`, JSON.stringify({ v: 1, ...payload }), { qos: 1 })
  const job = (id: string) => full.cloud.storage.printJobs.findById(seed.accountId, id)
  const statusOf = async (id: string) => (await job(id))?.status
  const hubOnline = async () => (await full.cloud.storage.agents.findById(hub.agent_id))?.online
  /** Every hub message the broker took so far has been handled: what it would have changed, it has. */
  const handled = () => full.cloud.dispatcher.handled()
  /** The hub connected with `session`, its presence recorded, whatever an earlier test left. */
  const present = async (session: string) => {
    await publish('presence', { online: true, session })
    await handled()
    expect(await hubOnline()).toBe(true)
  }
  /** The hub connected with `session` and then went away: offline, its printers too. */
  const goneAway = async (session: string) => {
    await present(session)
    await publish('presence', { online: false, session })
    await handled()
    expect(await hubOnline()).toBe(false)
  }
  const offersFor = (id: string) =>
    messages.filter((m) => m.topic.endsWith('/job-offer') && m.payload.print_job_id === id)

  beforeAll(async () => {
    full = await startFullCloud({ PENDING_JOB_EXPIRY_SECONDS: '60', CANCEL_CONFIRM_TIMEOUT_MS: '500' })
    seed = await seedAccount(full.cloud)
    hub = await enroll(full.url, seed.enrollmentToken)
    client = await connectHub(full.mqttUrl, {
      clientId: hub.agent_id,
      username: hub.agent_id,
      password: hub.credential,
    })
    client.on('message', (topic, payload) => {
      const message = { topic, payload: JSON.parse(payload.toString()) }
      messages.push(message)
      // The hub's answer to a cancel: it dropped the job, or had started printing it.
      if (topic.endsWith('/command') && message.payload.command === 'cancel_job' && answerCancel !== null)
        void publish('job-status', {
          print_job_id: message.payload.print_job_id,
          status: answerCancel,
          at: new Date().toISOString(),
        })
    })
    await client.subscribeAsync([`hubs/${hub.agent_id}/job-offer`, `hubs/${hub.agent_id}/command`], {
      qos: 1,
    })
    await publish('presence', { online: true, session: 's1' })
    await publish('state', {
      agent_version: '9.9.9',
      host: { hostname: 'pi', platform: 'linux', arch: 'arm64' },
      printers: [printer('receipt-1'), printer('receipt-2')],
    })
    // vi.waitFor: expect.poll is for tests, not hooks.
    await vi.waitFor(async () => {
      if (!(await full.cloud.storage.printers.locate(printerId())))
        throw new Error('printer not registered yet')
    }, POLL)
  })
  afterAll(async () => {
    client.end(true)
    await full.close()
  })

  it('registers reported printers under ids derived from the agent and the printer key', async () => {
    const { body } = await api<{ data: { printer_id: string; online: boolean; agent_id: string }[] }>(
      'GET',
      '/api/v1/printers',
    )
    expect(body.data.map((p) => p.printer_id).sort()).toEqual(
      [printerIdFor(hub.agent_id, 'receipt-1'), printerIdFor(hub.agent_id, 'receipt-2')].sort(),
    )
    expect(body.data.every((p) => p.online && p.agent_id === hub.agent_id)).toBe(true)
    expect(await full.cloud.storage.agents.findById(hub.agent_id)).toMatchObject({
      online: true,
      version: '9.9.9',
    })
  })

  it('offers a new job to its hub with the document URL, checksum and resolved options', async () => {
    const created = await createJob()
    await expect.poll(() => offersFor(created.print_job_id).length, POLL).toBeGreaterThan(0)
    const [offer] = offersFor(created.print_job_id)
    expect(offer?.payload).toMatchObject({
      v: 1,
      print_job_id: created.print_job_id,
      printer_id: printerId(),
      printer_key: 'receipt-1',
      document: {
        document_id: created.document_id,
        url: `${full.url}/agent-api/v1/documents/${created.document_id}`,
        sha256: expect.stringMatching(/^[0-9a-f]{64}$/),
        size_bytes: ESCPOS_RECEIPT.length,
        format: 'raw',
        raw_language: 'escpos',
        // Created with its bytes, and small: the hub prints it without a download.
        content_base64: ESCPOS_RECEIPT.toString('base64'),
      },
      options: { copies: 1, scale_mode: 'fit' },
      created_at: created.created_at,
    })
    expect(Date.parse(String(offer?.payload.expires_at)) - Date.parse(created.created_at)).toBe(60_000)
  })

  it('offers the jobs of small documents with their bytes, also when offered again; a large one without', async () => {
    const created = await createJob()
    const again = await api<PrintJob>('POST', '/api/v1/print-jobs', {
      printer_id: printerId(),
      document_id: created.document_id,
    })
    expect(again.status).toBe(201)
    await expect.poll(() => offersFor(again.body.print_job_id).length, POLL).toBeGreaterThan(0)
    // The document's row keeps its bytes (migration 24): the hub needs no download for this job either.
    expect(offersFor(again.body.print_job_id)[0]?.payload.document).toMatchObject({
      content_base64: ESCPOS_RECEIPT.toString('base64'),
    })

    const large = Buffer.concat([ESCPOS_RECEIPT, Buffer.alloc(OFFER_CONTENT_MAX_BYTES, 0x2d)])
    const bigJob = await api<PrintJob>('POST', '/api/v1/print-jobs/from-base64', {
      printer_id: printerId(),
      document_base64: large.toString('base64'),
      document_format: 'raw',
      document_raw_language: 'escpos',
    })
    expect(bigJob.status).toBe(201)
    const ofLarge = await api<PrintJob>('POST', '/api/v1/print-jobs', {
      printer_id: printerId(),
      document_id: bigJob.body.document_id,
    })
    await expect.poll(() => offersFor(ofLarge.body.print_job_id).length, POLL).toBeGreaterThan(0)
    expect(offersFor(ofLarge.body.print_job_id)[0]?.payload.document).not.toHaveProperty('content_base64')

    // Offered again when the hub connects anew: the bytes come from the document's row.
    const before = offersFor(created.print_job_id).length
    const beforeLarge = offersFor(ofLarge.body.print_job_id).length
    await publish('presence', { online: true, session: 's-again' })
    await expect.poll(() => offersFor(created.print_job_id).length, POLL).toBeGreaterThan(before)
    expect(offersFor(created.print_job_id).at(-1)?.payload.document).toMatchObject({
      content_base64: ESCPOS_RECEIPT.toString('base64'),
    })
    await expect.poll(() => offersFor(ofLarge.body.print_job_id).length, POLL).toBeGreaterThan(beforeLarge)
    expect(offersFor(ofLarge.body.print_job_id).at(-1)?.payload.document).not.toHaveProperty('content_base64')
  })

  it('records each status change once and in order; stale and repeated reports change nothing', async () => {
    const created = await createJob()
    const at = (s: number) => new Date(Date.parse(created.created_at) + s * 1000).toISOString()
    await publish('job-ack', { print_job_id: created.print_job_id, at: at(1) })
    await expect.poll(() => statusOf(created.print_job_id), POLL).toBe('reserved')
    await publish('job-ack', { print_job_id: created.print_job_id, at: at(2) })
    await publish('job-status', { print_job_id: created.print_job_id, status: 'printing', at: at(3) })
    await expect.poll(() => statusOf(created.print_job_id), POLL).toBe('printing')
    await publish('job-status', { print_job_id: created.print_job_id, status: 'printed', at: at(4) })
    await expect.poll(() => statusOf(created.print_job_id), POLL).toBe('printed')
    await publish('job-status', { print_job_id: created.print_job_id, status: 'printing', at: at(5) })
    await publish('job-status', {
      print_job_id: created.print_job_id,
      status: 'failed',
      at: at(6),
      failure_reason: 'interrupted',
      detail: 'connection reset',
    })
    await publish('job-ack', { print_job_id: created.print_job_id, at: at(7) })
    await handled()
    expect(await job(created.print_job_id)).toMatchObject({
      status: 'printed',
      reserved_at: at(1),
      started_at: at(3),
      completed_at: at(4),
      failure_reason: null,
      failure_detail: null,
    })
  })

  it('changes nothing when a hub reports on a job of another hub', async () => {
    const created = await createJob()
    const other = await seedAccount(full.cloud, 'Other shop')
    const intruder = await enroll(full.url, other.enrollmentToken)
    const intruderClient = await connectHub(full.mqttUrl, {
      clientId: intruder.agent_id,
      username: intruder.agent_id,
      password: intruder.credential,
    })
    try {
      const at = new Date().toISOString()
      const report = (topic: string, payload: object) =>
        intruderClient.publishAsync(
          `hubs/${intruder.agent_id}/${topic}`,
          JSON.stringify({ v: 1, print_job_id: created.print_job_id, at, ...payload }),
          { qos: 1 },
        )
      await report('job-ack', {})
      await report('job-waiting', { reason: 'paper_out' })
      await report('job-status', { status: 'printed' })
      await handled()
      expect(await job(created.print_job_id)).toMatchObject({
        status: 'pending',
        reserved_at: null,
        completed_at: null,
        waiting_reason: null,
      })
    } finally {
      intruderClient.end(true)
    }
    // Its own hub's report still applies.
    await publish('job-ack', { print_job_id: created.print_job_id, at: new Date().toISOString() })
    await expect.poll(() => statusOf(created.print_job_id), POLL).toBe('reserved')
  })

  it('keeps the failure reason the hub reports, and what it said about it', async () => {
    const created = await createJob()
    await publish('job-status', {
      print_job_id: created.print_job_id,
      status: 'failed',
      at: new Date().toISOString(),
      failure_reason: 'printer_paper_out',
    })
    await expect.poll(() => statusOf(created.print_job_id), POLL).toBe('failed')
    expect(await job(created.print_job_id)).toMatchObject({
      failure_reason: 'printer_paper_out',
      failure_detail: null,
    })

    const said = await createJob()
    await publish('job-status', {
      print_job_id: said.print_job_id,
      status: 'failed',
      at: new Date().toISOString(),
      failure_reason: 'render_failed',
      detail: 'ghostscript_error: Ghostscript failed (-100)',
    })
    await expect.poll(() => statusOf(said.print_job_id), POLL).toBe('failed')
    expect(await job(said.print_job_id)).toMatchObject({
      failure_reason: 'render_failed',
      failure_detail: 'ghostscript_error: Ghostscript failed (-100)',
    })
  })

  it('offers every pending and reserved job again when the hub reconnects', async () => {
    const pending = await createJob()
    const reserved = await createJob()
    await publish('job-ack', { print_job_id: reserved.print_job_id, at: new Date().toISOString() })
    await expect.poll(() => statusOf(reserved.print_job_id), POLL).toBe('reserved')
    const before = [offersFor(pending.print_job_id).length, offersFor(reserved.print_job_id).length]
    await publish('presence', { online: true, session: 's2' })
    await expect
      .poll(
        () =>
          offersFor(pending.print_job_id).length > before[0]! &&
          offersFor(reserved.print_job_id).length > before[1]!,
        POLL,
      )
      .toBe(true)
  })

  const cancelCommandsFor = (id: string) =>
    messages.filter(
      (m) =>
        m.topic.endsWith('/command') && m.payload.command === 'cancel_job' && m.payload.print_job_id === id,
    )
  const cancel = (id: string) =>
    api<PrintJob & { error_code: string; details: { status: string } }>(
      'POST',
      `/api/v1/print-jobs/${id}/cancel`,
    )

  it('cancels a job only once its hub confirms it dropped it', async () => {
    const created = await createJob()
    answerCancel = 'cancelled'
    const cancelled = await cancel(created.print_job_id)
    expect(cancelled.status).toBe(200)
    expect(cancelled.body).toMatchObject({ status: 'cancelled', completed_at: expect.any(String) })
    expect(cancelCommandsFor(created.print_job_id).map((m) => m.payload)).toEqual([
      { v: 1, command: 'cancel_job', print_job_id: created.print_job_id, reason: 'cancelled' },
    ])
    const again = await cancel(created.print_job_id)
    expect(again.status).toBe(409)
    expect(again.body).toMatchObject({
      error_code: 'print_job_not_cancellable',
      details: { status: 'cancelled' },
    })
    // A report for a cancelled job changes nothing.
    await publish('job-status', {
      print_job_id: created.print_job_id,
      status: 'printing',
      at: new Date().toISOString(),
    })
    await handled()
    expect((await job(created.print_job_id))?.status).toBe('cancelled')
  })

  it('answers 409 when the hub had started printing: the cancel lost the race', async () => {
    const created = await createJob()
    answerCancel = 'printing'
    const lost = await cancel(created.print_job_id)
    expect(lost.status).toBe(409)
    expect(lost.body).toMatchObject({
      error_code: 'print_job_not_cancellable',
      details: { status: 'printing' },
    })
    expect((await job(created.print_job_id))?.status).toBe('printing')
    // A printing job is refused without asking the hub.
    const commands = cancelCommandsFor(created.print_job_id).length
    expect((await cancel(created.print_job_id)).status).toBe(409)
    expect(cancelCommandsFor(created.print_job_id).length).toBe(commands)
  })

  it('answers 202 while the hub has not confirmed; the request stands and is sent again on reconnect', async () => {
    const created = await createJob()
    answerCancel = null
    const waiting = await cancel(created.print_job_id)
    expect(waiting.status).toBe(202)
    expect(waiting.body).toMatchObject({ print_job_id: created.print_job_id, status: 'pending' })
    // On reconnect the hub is asked to drop the job instead of being offered it.
    const offers = offersFor(created.print_job_id).length
    await publish('presence', { online: true, session: 's2' })
    await expect.poll(() => cancelCommandsFor(created.print_job_id).length, POLL).toBeGreaterThanOrEqual(2)
    expect(offersFor(created.print_job_id).length).toBe(offers)
    await publish('job-status', {
      print_job_id: created.print_job_id,
      status: 'cancelled',
      at: new Date().toISOString(),
    })
    await expect.poll(() => statusOf(created.print_job_id), POLL).toBe('cancelled')
  })

  it('expires a pending job its hub holds only through the hub', async () => {
    const created = await createJob()
    answerCancel = null
    expect(await full.cloud.dispatcher.expireStale(new Date(Date.now() + 61_000))).not.toContain(
      created.print_job_id,
    )
    await expect.poll(() => cancelCommandsFor(created.print_job_id).length, POLL).toBeGreaterThan(0)
    const [command] = cancelCommandsFor(created.print_job_id)
    expect(command?.payload).toMatchObject({ reason: 'expired' })
    expect((await job(created.print_job_id))?.status).toBe('pending')
    await publish('job-status', {
      print_job_id: created.print_job_id,
      status: 'failed',
      failure_reason: 'expired',
      at: new Date().toISOString(),
    })
    await expect.poll(() => statusOf(created.print_job_id), POLL).toBe('failed')
    expect((await job(created.print_job_id))?.failure_reason).toBe('expired')
  })

  it("lets a hub download only its own jobs' documents, with its credential", async () => {
    const created = await createJob()
    const url = `${full.url}/agent-api/v1/documents/${created.document_id}`
    const ok = await fetch(url, { headers: { authorization: `Bearer ${hub.credential}` } })
    expect(ok.status).toBe(200)
    // Small and RAW: served from its row (migration 24), with the same headers as a file of the blob store.
    expect(ok.headers.get('content-length')).toBe(String(ESCPOS_RECEIPT.length))
    expect(ok.headers.get('x-content-sha256')).toBe(createHash('sha256').update(ESCPOS_RECEIPT).digest('hex'))
    expect(ok.headers.get('content-type')).toBe('application/octet-stream')
    expect(Buffer.from(await ok.arrayBuffer()).equals(ESCPOS_RECEIPT)).toBe(true)
    const anonymous = await fetch(url)
    expect(anonymous.status).toBe(401)
    const other = await enroll(full.url, (await seedAccount(full.cloud, 'Other')).enrollmentToken)
    const foreign = await fetch(url, { headers: { authorization: `Bearer ${other.credential}` } })
    expect(foreign.status).toBe(404)
  })

  it('takes the printers offline with the hub, but not on a stale last will', async () => {
    await present('s4')
    // The last will of the connection before.
    await publish('presence', { online: false, session: 's1' })
    await handled()
    expect(await hubOnline()).toBe(true)
    await publish('presence', { online: false, session: 's4' })
    await expect.poll(hubOnline, POLL).toBe(false)
    const { body } = await api<{ data: { online: boolean }[] }>('GET', '/api/v1/printers')
    expect(body.data.every((p) => !p.online)).toBe(true)
    // A state report sent just before the hub went away cannot bring its printers back online.
    await publish('state', {
      agent_version: '9.9.9',
      host: { hostname: 'pi', platform: 'linux', arch: 'arm64' },
      printers: [printer('receipt-1')],
    })
    await handled()
    const after = await api<{ data: { online: boolean }[] }>('GET', '/api/v1/printers')
    expect(after.body.data.every((p) => !p.online)).toBe(true)
  })

  it('cancels and expires at once a job no hub was offered (its hub is offline)', async () => {
    await goneAway('s5')
    const unoffered = await createJob()
    const cancelled = await cancel(unoffered.print_job_id)
    expect(cancelled.status).toBe(200)
    expect(cancelled.body.status).toBe('cancelled')
    const stale = await createJob()
    expect(await full.cloud.dispatcher.expireStale(new Date(Date.now() + 61_000))).toContain(
      stale.print_job_id,
    )
    expect(await job(stale.print_job_id)).toMatchObject({ status: 'failed', failure_reason: 'expired' })
    expect(offersFor(unoffered.print_job_id)).toEqual([])
    expect(cancelCommandsFor(unoffered.print_job_id)).toEqual([])
    expect(offersFor(stale.print_job_id)).toEqual([])
  })

  it('brings the printers of its latest state report online with a presence handled after the report', async () => {
    // Another node may handle a hub's state report before this one handles its presence (both follow a connect).
    await goneAway('s6')
    const reportedAt = new Date().toISOString()
    await publish('state', {
      agent_version: '9.9.9',
      host: { hostname: 'pi', platform: 'linux', arch: 'arm64' },
      printers: [printer('receipt-2')],
    })
    const seenSince = async () =>
      ((await full.cloud.storage.printers.findById(seed.accountId, printerIdFor(hub.agent_id, 'receipt-2')))
        ?.last_seen_at ?? '') >= reportedAt
    await expect.poll(seenSince, POLL).toBe(true)
    await publish('presence', { online: true, session: 's7' })
    await expect.poll(hubOnline, POLL).toBe(true)
    const { body } = await api<{ data: { printer_id: string; online: boolean }[] }>('GET', '/api/v1/printers')
    expect(Object.fromEntries(body.data.map((p) => [p.printer_id, p.online]))).toEqual({
      [printerIdFor(hub.agent_id, 'receipt-1')]: false,
      [printerIdFor(hub.agent_id, 'receipt-2')]: true,
    })
  })

  it('refuses an expired enrollment token', async () => {
    const { storage } = full.cloud
    const token = 'enr_expired-token-for-test'
    const enrollment = await storage.enrollments.create(
      seed.accountId,
      'Late hub',
      hashSecret(token),
      new Date(Date.now() - 1000),
    )
    expect((await storage.enrollments.findById(enrollment.enrollment_id))?.state).toBe('expired')
    const res = await fetch(`${full.url}/agent-api/v1/enroll`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ token, hostname: 'pi', agent_version: '1' }),
    })
    expect(res.status).toBe(409)
    expect(((await res.json()) as { error_code: string }).error_code).toBe('enrollment_expired')
  })
})
