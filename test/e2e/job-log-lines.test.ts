import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { PrintJob } from '../../protocol/print-job.ts'
import { type PrinterSimulator, startPrinterSimulator } from '../simulators/printer-simulator.ts'
import { ApiClient } from './api-client.ts'
import {
  type CloudProcess,
  type HubProcess,
  setUpAccount,
  startCloudProcess,
  startHubProcess,
  stopAll,
} from './harness.ts'
import { duplicateKeys, logLines, rawLines } from './log-lines.ts'

const RECEIPT = Buffer.from('\x1b@Log lines\n\x1dVB\x00', 'latin1')

describe('duplicateKeys', () => {
  it('finds a key repeated in one object, at any depth, and nothing else', () => {
    expect(duplicateKeys('{"msg":"a","level":30,"msg":"b"}')).toEqual(['msg'])
    expect(duplicateKeys('{"a":{"b":1,"b":2},"c":[{"d":1,"d":2}],"e":"\\"e\\":1,"}')).toEqual(['b', 'd'])
    expect(duplicateKeys('{"a":{"a":1},"b":["a","a"],"c":{"a":1}}')).toEqual([])
  })
})

describe('job transitions and printer reachability in the logs of real processes', {
  timeout: 120_000,
}, () => {
  let cloud: CloudProcess
  let hub: HubProcess
  let api: ApiClient
  let receipt: PrinterSimulator
  let flaky: PrinterSimulator
  const ids: Record<string, string> = {}

  const cloudLines = () => logLines(cloud.logs)
  const hubLines = () => logLines(hub.logs)
  const linesOf = (lines: Record<string, unknown>[], printJobId: string) =>
    lines.filter((line) => line.print_job_id === printJobId)
  const messages = (lines: Record<string, unknown>[]) => lines.map((line) => line.msg)

  /** POST with our own X-Request-Id, so that the lines of that request can be told by it. */
  async function post(path: string, requestId: string, body?: unknown) {
    return api.request<PrintJob>('POST', path, body, { 'x-request-id': requestId })
  }

  function createRaw(printerId: string, requestId: string) {
    return post('/api/v1/print-jobs/from-base64', requestId, {
      printer_id: printerId,
      document_base64: RECEIPT.toString('base64'),
      document_format: 'raw',
      document_raw_language: 'escpos',
    })
  }

  beforeAll(async () => {
    cloud = await startCloudProcess()
    const account = await setUpAccount(cloud)
    api = new ApiClient(cloud.url, account.accessToken)
    receipt = await startPrinterSimulator({ language: 'escpos' })
    flaky = await startPrinterSimulator({ language: 'escpos' })
    hub = await startHubProcess({
      cloudUrl: cloud.url,
      enroll: account.enrollmentToken,
      printers: [`${receipt.uri}&name=Receipt`, `${flaky.uri}&name=Flaky`],
      env: { HUB_UNREACHABLE_TIMEOUT_MS: '1500' },
    })
    for (const printer of await api.waitForPrinters(2)) ids[printer.name] = printer.printer_id
  })
  afterAll(async () => {
    await stopAll()
    for (const simulator of [receipt, flaky]) await simulator?.close()
  })

  it('a printed job: one line per transition on the cloud and on the hub, the creation with its request id', async () => {
    const requestId = `create-${randomUUID()}`
    const created = await createRaw(ids.Receipt!, requestId)
    expect(created.status).toBe(201)
    const job = { print_job_id: created.body.print_job_id, printer_id: ids.Receipt }
    await api.waitForJob(job.print_job_id, ['printed'])

    await expect.poll(() => messages(linesOf(cloudLines(), job.print_job_id))).toContain('print job printed')
    const onCloud = linesOf(cloudLines(), job.print_job_id)
    expect(messages(onCloud)).toEqual([
      'print job created',
      'print job offered',
      'print job reserved',
      'print job printing',
      'print job printed',
    ])
    expect(onCloud).toEqual([
      expect.objectContaining({ ...job, status: 'pending', request_id: requestId }),
      expect.objectContaining({ ...job, status: 'pending' }),
      expect.objectContaining({ ...job, status: 'reserved' }),
      expect.objectContaining({ ...job, status: 'printing' }),
      expect.objectContaining({ ...job, status: 'printed' }),
    ])

    await expect.poll(() => messages(linesOf(hubLines(), job.print_job_id))).toContain('print job printed')
    expect(linesOf(hubLines(), job.print_job_id)).toEqual([
      expect.objectContaining({ ...job, msg: 'print job reserved', status: 'reserved' }),
      expect.objectContaining({ ...job, msg: 'print job printing', status: 'printing' }),
      expect.objectContaining({ ...job, msg: 'print job printed', status: 'printed' }),
    ])
  })

  it('a cancelled job: the cloud logs the request and the hub’s confirmation with the cancel’s request id', async () => {
    receipt.setCondition({ paperOut: true })
    const created = await createRaw(ids.Receipt!, `create-${randomUUID()}`)
    const job = { print_job_id: created.body.print_job_id, printer_id: ids.Receipt }
    await expect
      .poll(() => linesOf(cloudLines(), job.print_job_id).find((line) => line.msg === 'print job waiting'))
      .toMatchObject({ ...job, status: 'reserved', waiting_reason: 'paper_out' })

    const requestId = `cancel-${randomUUID()}`
    const cancelled = await post(`/api/v1/print-jobs/${job.print_job_id}/cancel`, requestId)
    expect(cancelled).toMatchObject({ status: 200, body: { status: 'cancelled' } })
    receipt.setCondition({ paperOut: false })

    const onCloud = linesOf(cloudLines(), job.print_job_id)
    expect(onCloud.slice(-2)).toEqual([
      expect.objectContaining({
        ...job,
        msg: 'print job cancel requested',
        status: 'reserved',
        cancel_reason: 'cancelled',
        request_id: requestId,
      }),
      expect.objectContaining({
        ...job,
        msg: 'print job cancelled',
        status: 'cancelled',
        request_id: requestId,
      }),
    ])
    const onHub = linesOf(hubLines(), job.print_job_id)
    expect(onHub.at(-1)).toMatchObject({ ...job, msg: 'print job cancelled', status: 'cancelled' })
    expect(messages(onHub)).not.toContain('print job printing')
  })

  it('an unreachable printer is logged once when it goes and once when it comes back; its job fails with the reason', async () => {
    const flakyLines = (msg: string) =>
      hubLines().filter((line) => line.msg === msg && line.printer_name === 'Flaky')
    /** Waits for `rounds` more health reports of the Flaky printer (each idle round ends with one). */
    const healthRounds = async (rounds: number) => {
      const seen = new Set<string>()
      await expect
        .poll(
          async () => {
            const flakyPrinter = (await api.printers()).find((p) => p.printer_id === ids.Flaky)
            seen.add(String(flakyPrinter?.health?.checked_at))
            return seen.size
          },
          { timeout: 15_000 },
        )
        .toBeGreaterThan(rounds)
    }
    await healthRounds(2)
    expect(flakyLines('printer unreachable')).toEqual([])

    const port = flaky.port
    await flaky.close()
    await expect.poll(() => flakyLines('printer unreachable')).toHaveLength(1)
    const created = await createRaw(ids.Flaky!, `create-${randomUUID()}`)
    const job = { print_job_id: created.body.print_job_id, printer_id: ids.Flaky }
    expect(await api.waitForJob(job.print_job_id, ['failed', 'printed'])).toMatchObject({
      status: 'failed',
      failure_reason: 'printer_unreachable',
    })
    await healthRounds(3)

    flaky = await startPrinterSimulator({ language: 'escpos', port })
    await expect.poll(() => flakyLines('printer reachable again'), { timeout: 10_000 }).toHaveLength(1)
    await healthRounds(3)

    const [gone] = flakyLines('printer unreachable')
    expect(gone).toMatchObject({ level: 40, reasons: ['transport_unreachable'] })
    expect(typeof gone!.printer).toBe('string')
    expect(flakyLines('printer reachable again')).toEqual([
      expect.objectContaining({ level: 30, printer: gone!.printer, state: 'ready' }),
    ])
    expect(flakyLines('printer unreachable')).toHaveLength(1)

    const failed = { ...job, status: 'failed', failure_reason: 'printer_unreachable' }
    expect(linesOf(hubLines(), job.print_job_id).at(-1)).toMatchObject({ ...failed, msg: 'print job failed' })
    expect(linesOf(cloudLines(), job.print_job_id).at(-1)).toMatchObject({
      ...failed,
      msg: 'print job failed',
    })
  })

  it('no line of either process repeats a key (checked in the raw text, which JSON.parse would hide)', () => {
    const lines = [...rawLines(cloud.logs), ...rawLines(hub.logs)]
    expect(lines.length).toBeGreaterThan(20)
    const offenders = lines.flatMap((line) => {
      const keys = duplicateKeys(line)
      return keys.length > 0 ? [{ keys, line }] : []
    })
    expect(offenders).toEqual([])
  })
})
