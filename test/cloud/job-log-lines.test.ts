import { pino } from 'pino'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { PrintJob } from '../../protocol/print-job.ts'
import { seedAccount, startFullCloud } from './hub-link.ts'
import { ESCPOS_RECEIPT, RECEIPT_PRINTER } from './test-cloud.ts'

/** The lines of jobs no hub was offered (their hub is offline): cancelled at once, or expired by the cloud. */
describe('job lines of a cloud whose hub is offline', () => {
  let full: Awaited<ReturnType<typeof startFullCloud>>
  let token: string
  let printerId: string
  const lines: Record<string, unknown>[] = []
  const linesOf = (printJobId: string) => lines.filter((line) => line.print_job_id === printJobId)

  async function post(path: string, requestId: string, body?: unknown) {
    const res = await fetch(`${full.url}${path}`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${token}`,
        'x-request-id': requestId,
        ...(body !== undefined && { 'content-type': 'application/json' }),
      },
      ...(body !== undefined && { body: JSON.stringify(body) }),
    })
    return { status: res.status, body: (await res.json()) as PrintJob }
  }
  const create = (requestId: string) =>
    post('/api/v1/print-jobs/from-base64', requestId, {
      printer_id: printerId,
      document_base64: ESCPOS_RECEIPT.toString('base64'),
      document_format: 'raw',
      document_raw_language: 'escpos',
    })

  beforeAll(async () => {
    const logger = pino({ level: 'info' }, { write: (line: string) => lines.push(JSON.parse(line)) })
    full = await startFullCloud({ PENDING_JOB_EXPIRY_SECONDS: '60' }, logger)
    const seed = await seedAccount(full.cloud)
    token = seed.token
    const { storage } = full.cloud
    const agent = await storage.agents.insert({
      account_id: seed.accountId,
      name: 'Offline hub',
      online: false,
    })
    printerId = (
      await storage.printers.insert({
        account_id: seed.accountId,
        agent_id: agent.agent_id,
        name: 'Receipts',
        capabilities: RECEIPT_PRINTER,
      })
    ).printer_id
  })
  afterAll(async () => {
    await full.close()
  })

  it('a job created then cancelled: each line carries the id of the request that made it', async () => {
    const created = await create('create-1')
    expect(created.status).toBe(201)
    const job = { print_job_id: created.body.print_job_id, printer_id: printerId }
    expect((await post(`/api/v1/print-jobs/${job.print_job_id}/cancel`, 'cancel-1')).status).toBe(200)
    expect(linesOf(job.print_job_id)).toEqual([
      expect.objectContaining({
        ...job,
        msg: 'print job created',
        status: 'pending',
        request_id: 'create-1',
      }),
      expect.objectContaining({
        ...job,
        msg: 'print job cancelled',
        status: 'cancelled',
        request_id: 'cancel-1',
      }),
    ])
  })

  it('a job that expires unoffered: one line with its failure reason', async () => {
    const created = await create('create-2')
    const job = { print_job_id: created.body.print_job_id, printer_id: printerId }
    expect(await full.cloud.dispatcher.expireStale(new Date(Date.now() + 61_000))).toEqual([job.print_job_id])
    const [, expired, ...more] = linesOf(job.print_job_id)
    expect(expired).toMatchObject({
      ...job,
      msg: 'print job expired',
      name: 'dispatch',
      status: 'failed',
      failure_reason: 'expired',
    })
    expect(expired).not.toHaveProperty('request_id')
    expect(more).toEqual([])
  })
})
