import type { MqttClient } from 'mqtt'
import { pino } from 'pino'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { SilentJobs } from '../../../cloud/dispatch/silent-jobs.ts'
import type { PrintJob } from '../../../protocol/print-job.ts'
import { printerIdFor } from '../../../protocol/printer-id.ts'
import { connectHub, enroll, seedAccount, startFullCloud } from '../hub-link.ts'
import { ESCPOS_RECEIPT, RECEIPT_PRINTER } from '../test-cloud.ts'

/**
 * A hub's report can be lost after the broker took it (a cloud node killed before recording it). The cloud
 * asks the hub again about jobs it holds that went silent, and the hub's answer (its state of the job) moves
 * the job on. An MQTT client stands in for the hub; the passes are run by hand at chosen times.
 */
type FullCloud = Awaited<ReturnType<typeof startFullCloud>>
const SILENT_MS = 30_000

describe('asking hubs again about silent jobs', () => {
  let full: FullCloud
  let seed: Awaited<ReturnType<typeof seedAccount>>
  let hub: { agent_id: string; credential: string }
  let client: MqttClient
  let silent: SilentJobs
  const received: { topic: string; payload: Record<string, unknown> }[] = []
  const printerId = () => printerIdFor(hub.agent_id, 'receipt-1')

  const publish = (topic: string, payload: object) =>
    client.publishAsync(`hubs/${hub.agent_id}/${topic}`, JSON.stringify({ v: 1, ...payload }), { qos: 1 })
  const status = async (id: string) =>
    (await full.cloud.storage.printJobs.findById(seed.accountId, id))?.status
  const about = (id: string) =>
    received
      .filter((m) => m.payload.print_job_id === id)
      .map((m) => `${m.topic.split('/').at(-1)}${m.payload.command ? ` ${m.payload.command}` : ''}`)
  const createJob = async () => {
    const res = await fetch(`${full.url}/api/v1/print-jobs/from-base64`, {
      method: 'POST',
      headers: { authorization: `Bearer ${seed.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        printer_id: printerId(),
        document_base64: ESCPOS_RECEIPT.toString('base64'),
        document_format: 'raw',
        document_raw_language: 'escpos',
      }),
    })
    expect(res.status).toBe(201)
    const job = (await res.json()) as PrintJob
    // Offered at once: its hub is online.
    await expect.poll(() => about(job.print_job_id)).toEqual(['job-offer'])
    return job
  }
  /** A pass as if run `ms` after now. */
  const passAfter = (ms: number) => silent.askAgain(Date.now() + ms)

  beforeAll(async () => {
    full = await startFullCloud()
    seed = await seedAccount(full.cloud)
    hub = await enroll(full.url, seed.enrollmentToken)
    client = await connectHub(full.mqttUrl, {
      clientId: hub.agent_id,
      username: hub.agent_id,
      password: hub.credential,
    })
    client.on('message', (topic, payload) =>
      received.push({ topic, payload: JSON.parse(payload.toString()) }),
    )
    await client.subscribeAsync([`hubs/${hub.agent_id}/job-offer`, `hubs/${hub.agent_id}/command`], {
      qos: 1,
    })
    await publish('presence', { online: true, session: 's1' })
    await publish('state', {
      agent_version: '9.9.9',
      host: { hostname: 'pi', platform: 'linux', arch: 'arm64' },
      printers: [
        {
          key: 'receipt-1',
          name: 'Receipts',
          uri: 'socket://127.0.0.1:9100?language=escpos',
          languages: ['escpos'],
          capabilities: { ...RECEIPT_PRINTER, document_formats: ['raw'] },
          health: { state: 'ready', reasons: [], checked_at: new Date().toISOString() },
        },
      ],
    })
    await vi.waitFor(
      async () => {
        if (!(await full.cloud.storage.printers.locate(printerId())))
          throw new Error('the hub’s printer was never registered')
      },
      { timeout: 10_000, interval: 10 },
    )
    silent = new SilentJobs({
      storage: full.cloud.storage,
      bus: full.cloud.broker.bus,
      logger: pino({ level: 'silent' }),
      publicUrl: `${full.url}`,
      pendingExpirySeconds: 3600,
      silentMs: SILENT_MS,
    })
  })

  afterAll(async () => {
    client.end(true)
    await full.close()
  })

  it('offers again a job whose acknowledgement was lost, and the hub’s answer moves it on; not before it is silent', async () => {
    const job = await createJob()
    expect(await passAfter(SILENT_MS - 5000)).toEqual([])
    expect(await passAfter(SILENT_MS + 1000)).toEqual([job.print_job_id])
    await expect.poll(() => about(job.print_job_id)).toEqual(['job-offer', 'job-offer'])
    // The hub has it already and had printed it: it sends its final status again (hub/jobs/spool.ts).
    await publish('job-status', {
      print_job_id: job.print_job_id,
      status: 'printed',
      at: new Date().toISOString(),
    })
    await expect.poll(() => status(job.print_job_id)).toBe('printed')
    expect(await passAfter(10 * SILENT_MS)).toEqual([])
  })

  it('asks about a job that started with cancel_job, never with an offer, at doubling intervals', async () => {
    const job = await createJob()
    await publish('job-status', {
      print_job_id: job.print_job_id,
      status: 'printing',
      at: new Date().toISOString(),
    })
    await expect.poll(() => status(job.print_job_id)).toBe('printing')
    expect(await passAfter(SILENT_MS + 1000)).toEqual([job.print_job_id])
    expect(await passAfter(SILENT_MS + 2000)).toEqual([])
    expect(await passAfter(3 * SILENT_MS + 2000)).toEqual([job.print_job_id])
    await expect
      .poll(() => about(job.print_job_id))
      .toEqual(['job-offer', 'command cancel_job', 'command cancel_job'])
    const asked = received.filter((m) => m.payload.print_job_id === job.print_job_id && m.payload.command)
    expect(asked.map((m) => m.payload.reason)).toEqual(['cancelled', 'cancelled'])
    // The hub answers with its state of the job: printed. The job ends so, and is not asked about again.
    await publish('job-status', {
      print_job_id: job.print_job_id,
      status: 'printed',
      at: new Date().toISOString(),
    })
    await expect.poll(() => status(job.print_job_id)).toBe('printed')
    expect(await passAfter(20 * SILENT_MS)).toEqual([])
  })

  it('leaves the jobs of a hub that is offline alone (it is offered everything when it connects)', async () => {
    const job = await createJob()
    await publish('presence', { online: false, session: 's1' })
    await expect
      .poll(async () => (await full.cloud.storage.agents.findById(hub.agent_id))?.online)
      .toBe(false)
    expect(await passAfter(10 * SILENT_MS)).toEqual([])
    expect(about(job.print_job_id)).toEqual(['job-offer'])
  })
})
