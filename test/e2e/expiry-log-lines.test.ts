import { afterAll, beforeAll, describe, expect, it } from 'vitest'
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

const RECEIPT = Buffer.from('\x1b@Too late\n\x1dVB\x00', 'latin1')

describe('a job that expires on its hub, in the logs of real processes', { timeout: 60_000 }, () => {
  let cloud: CloudProcess
  let hub: HubProcess
  let api: ApiClient
  let printer: PrinterSimulator
  let printerId: string

  beforeAll(async () => {
    cloud = await startCloudProcess({ env: { PENDING_JOB_EXPIRY_SECONDS: '2' } })
    const account = await setUpAccount(cloud)
    api = new ApiClient(cloud.url, account.accessToken)
    printer = await startPrinterSimulator({ language: 'escpos' })
    hub = await startHubProcess({
      cloudUrl: cloud.url,
      enroll: account.enrollmentToken,
      printers: [printer.uri],
    })
    printerId = (await api.waitForPrinters(1))[0]!.printer_id
  })
  afterAll(async () => {
    await stopAll()
    await printer?.close()
  })

  it('a job not started by its deadline: the hub fails it and both log it expired, with its ids', async () => {
    // The first job waits for paper; the second waits behind it until it is past its deadline.
    printer.setCondition({ paperOut: true })
    const first = await api.printRaw(printerId, RECEIPT, 'escpos')
    const late = await api.printRaw(printerId, RECEIPT, 'escpos')
    const job = { print_job_id: late.print_job_id, printer_id: printerId }
    const deadline = Date.parse(late.created_at) + 2000
    await expect.poll(() => Date.now() > deadline, { timeout: 5000 }).toBe(true)
    printer.setCondition({ paperOut: false })
    await api.waitForJob(first.print_job_id, ['printed'])
    expect(await api.waitForJob(job.print_job_id, ['failed', 'printed', 'cancelled'])).toMatchObject({
      status: 'failed',
      failure_reason: 'expired',
    })

    const expired = { ...job, msg: 'print job expired', status: 'failed', failure_reason: 'expired' }
    const linesOf = (chunks: string[]) =>
      logLines(chunks).filter((line) => line.print_job_id === job.print_job_id)
    await expect.poll(() => linesOf(cloud.logs).at(-1)).toMatchObject(expired)
    expect(linesOf(cloud.logs).map((line) => line.msg)).toEqual([
      'print job created',
      'print job offered',
      'print job reserved',
      'print job expired',
    ])
    expect(linesOf(hub.logs)).toEqual([
      expect.objectContaining({ ...job, msg: 'print job reserved', status: 'reserved' }),
      expect.objectContaining({ ...expired, level: 40 }),
    ])
    expect(printer.received().toString('latin1')).toBe(RECEIPT.toString('latin1'))

    const offenders = [...rawLines(cloud.logs), ...rawLines(hub.logs)].filter(
      (l) => duplicateKeys(l).length > 0,
    )
    expect(offenders).toEqual([])
  })
})
