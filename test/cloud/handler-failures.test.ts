import path from 'node:path'
import { Writable } from 'node:stream'
import Database from 'better-sqlite3'
import type { MqttClient } from 'mqtt'
import { pino } from 'pino'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { DATABASE_FILE } from '../../cloud/storage/storage.ts'
import type { HubPrinter } from '../../protocol/hub-messages.ts'
import type { PrintJob } from '../../protocol/print-job.ts'
import { printerIdFor } from '../../protocol/printer-id.ts'
import { connectHub, enroll, seedAccount, startFullCloud } from './hub-link.ts'
import { ESCPOS_RECEIPT, RECEIPT_PRINTER } from './test-cloud.ts'

const printer = (name: string): HubPrinter => ({
  key: 'receipt-1',
  name,
  uri: 'socket://127.0.0.1:9100?language=escpos',
  languages: ['escpos'],
  capabilities: { ...RECEIPT_PRINTER, document_formats: ['raw'] },
  health: { state: 'ready', reasons: [], checked_at: new Date().toISOString() },
})

/**
 * Issue 6, point 3: no message from a hub and no timer can crash the cloud. With the database locked by
 * another connection (as a busy or full disk would), a hub's state report, a job status and the expiry sweep
 * all fail; each failure is logged with the hub and the message, the process stays up (an uncaught exception
 * here would fail the run), and the work is done once the lock is released.
 */
describe('hub-message handlers and timers on a locked database', () => {
  let full: Awaited<ReturnType<typeof startFullCloud>>
  let client: MqttClient
  let hub: { agent_id: string; credential: string }
  let token: string
  let accountId: string
  const lines: Record<string, unknown>[] = []
  const logger = pino(
    { level: 'info' },
    new Writable({
      write(chunk: Buffer, _encoding, done) {
        for (const line of chunk.toString('utf8').split('\n')) if (line) lines.push(JSON.parse(line))
        done()
      },
    }),
  )
  const logged = (msg: string, topic?: string) =>
    lines.some((l) => l.msg === msg && (topic === undefined || l.topic === topic))
  const publish = (topic: string, payload: object) =>
    client.publishAsync(`hubs/${hub.agent_id}/${topic}`, JSON.stringify({ v: 1, ...payload }), { qos: 1 })
  const createJob = async () => {
    const res = await fetch(`${full.url}/api/v1/print-jobs/from-base64`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        printer_id: printerIdFor(hub.agent_id, 'receipt-1'),
        document_base64: ESCPOS_RECEIPT.toString('base64'),
        document_format: 'raw',
        document_raw_language: 'escpos',
      }),
    })
    expect(res.status).toBe(201)
    return (await res.json()) as PrintJob
  }

  beforeAll(async () => {
    full = await startFullCloud(
      { PENDING_JOB_EXPIRY_SECONDS: '1', DATABASE_BUSY_TIMEOUT_MS: '50', LOG_LEVEL: 'info' },
      logger,
    )
    const seed = await seedAccount(full.cloud)
    token = seed.token
    accountId = seed.accountId
    hub = await enroll(full.url, seed.enrollmentToken)
    client = await connectHub(full.mqttUrl, {
      clientId: hub.agent_id,
      username: hub.agent_id,
      password: hub.credential,
    })
    await client.subscribeAsync(`hubs/${hub.agent_id}/command`, { qos: 1 })
    await publish('presence', { online: true, session: 's1' })
    await publish('state', {
      agent_version: '1.0.0',
      host: { hostname: 'pi', platform: 'linux', arch: 'arm64' },
      printers: [printer('Before')],
    })
    await vi.waitFor(
      async () => {
        if (!(await full.cloud.storage.printers.locate(printerIdFor(hub.agent_id, 'receipt-1'))))
          throw new Error('the hub’s printer was not registered')
      },
      { timeout: 10_000, interval: 10 },
    )
  })
  afterAll(async () => {
    client.end(true)
    await full.close()
  })

  it('logs each failure, stays up, and does the work once the database is free', async () => {
    const printing = await createJob()
    const expiring = await createJob()
    const commands: Record<string, unknown>[] = []
    client.on('message', (_topic, payload) => commands.push(JSON.parse(payload.toString())))

    const locker = new Database(path.join(full.dataDir, DATABASE_FILE))
    locker.exec('BEGIN IMMEDIATE')
    await publish('state', {
      agent_version: '1.0.1',
      host: { hostname: 'pi', platform: 'linux', arch: 'arm64' },
      printers: [printer('After')],
    })
    await publish('job-status', {
      print_job_id: printing.print_job_id,
      status: 'printing',
      at: new Date().toISOString(),
    })
    await expect.poll(() => logged('hub message handler failed', 'state'), { timeout: 10_000 }).toBe(true)
    await expect
      .poll(() => logged('hub message handler failed', 'job-status'), { timeout: 10_000 })
      .toBe(true)
    await expect
      .poll(() => logged('pending-job expiry failed; it runs again at the next sweep'), { timeout: 10_000 })
      .toBe(true)
    const failure = lines.find((l) => l.msg === 'hub message handler failed' && l.topic === 'job-status')
    expect(failure).toMatchObject({
      agent_id: hub.agent_id,
      message: { print_job_id: printing.print_job_id, status: 'printing' },
      err: { code: 'SQLITE_BUSY' },
    })
    locker.exec('COMMIT')
    locker.close()

    const { storage } = full.cloud
    await expect
      .poll(async () => (await storage.printJobs.findById(accountId, printing.print_job_id))?.status, {
        timeout: 15_000,
      })
      .toBe('printing')
    await expect
      .poll(async () => (await storage.agents.findById(hub.agent_id))?.version, { timeout: 15_000 })
      .toBe('1.0.1')
    // The expiry sweep runs again: it asks the hub to drop the job it holds.
    await expect
      .poll(() => commands.some((c) => c.print_job_id === expiring.print_job_id && c.reason === 'expired'), {
        timeout: 15_000,
      })
      .toBe(true)
  })
})
