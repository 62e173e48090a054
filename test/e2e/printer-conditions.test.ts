import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { freePort } from '../helpers/free-port.ts'
import { type PrinterSimulator, startPrinterSimulator } from '../simulators/printer-simulator.ts'
import { ApiClient } from './api-client.ts'
import { type CloudProcess, setUpAccount, startCloudProcess, startHubProcess, stopAll } from './harness.ts'
import { logLines } from './log-lines.ts'

const RECEIPT = Buffer.from('\x1b@Paper test\n\x1dVB\x00', 'latin1')
const LABEL = Buffer.from('^XA^FO20,20^A0N,30,30^FDCover test^FS^XZ')

describe('printer conditions, through real processes', { timeout: 120_000 }, () => {
  let cloud: CloudProcess
  let api: ApiClient
  let receipt: PrinterSimulator
  let label: PrinterSimulator
  let silent: PrinterSimulator
  const ids: Record<string, string> = {}
  let unreachablePort: number

  beforeAll(async () => {
    cloud = await startCloudProcess()
    const account = await setUpAccount(cloud)
    api = new ApiClient(cloud.url, account.accessToken)
    receipt = await startPrinterSimulator({ language: 'escpos' })
    label = await startPrinterSimulator({ language: 'zpl' })
    silent = await startPrinterSimulator({ language: 'escpos', answersStatus: false })
    unreachablePort = await freePort()
    await startHubProcess({
      cloudUrl: cloud.url,
      enroll: account.enrollmentToken,
      printers: [
        `${receipt.uri}&name=Receipt`,
        `${label.uri}&name=Label`,
        `${silent.uri}&name=Silent`,
        `socket://127.0.0.1:${unreachablePort}?language=escpos&name=Gone`,
      ],
      env: { HUB_PAPER_WAIT_TIMEOUT_MS: '1500', HUB_UNREACHABLE_TIMEOUT_MS: '1500' },
    })
    for (const printer of await api.waitForPrinters(4)) ids[printer.name] = printer.printer_id
  })
  afterAll(async () => {
    await stopAll()
    for (const simulator of [receipt, label, silent]) await simulator?.close()
  })

  it('reports printer health to the cloud, and "unknown" for a printer that never answers status', async () => {
    const health = async () =>
      Object.fromEntries(
        (await api.printers()).map((p) => [p.name, [p.health?.state, ...(p.health?.reasons ?? [])]]),
      )
    await expect.poll(health, { timeout: 10_000 }).toMatchObject({
      Receipt: ['ready'],
      Label: ['ready'],
      Silent: ['unknown', 'no_status_reply'],
      Gone: ['offline', 'transport_unreachable'],
    })
    receipt.setCondition({ paperLow: true })
    await expect
      .poll(async () => (await api.printers()).find((p) => p.name === 'Receipt')?.health?.state, {
        timeout: 10_000,
      })
      .toBe('paper_low')
    receipt.setCondition({ paperLow: false })
  })

  it('prints on a printer that does not answer status: unknown is not broken', async () => {
    const job = await api.printRaw(ids.Silent!, RECEIPT, 'escpos')
    await api.waitForJob(job.print_job_id, ['printed'])
    expect(silent.received().equals(RECEIPT)).toBe(true)
  })

  it('waits while the paper is out, then fails with printer_paper_out, printing nothing', async () => {
    receipt.clear()
    receipt.setCondition({ paperOut: true })
    const job = await api.printRaw(ids.Receipt!, RECEIPT, 'escpos')
    // While it waits, the job says why (issue 7.6: an additive field).
    await expect
      .poll(async () => (await api.job(job.print_job_id)).waiting_reason, { timeout: 10_000, interval: 25 })
      .toBe('paper_out')
    const done = await api.waitForJob(job.print_job_id, ['failed', 'printed'])
    expect(done).toMatchObject({
      status: 'failed',
      failure_reason: 'printer_paper_out',
      started_at: null,
      waiting_reason: null,
    })
    expect(receipt.received().length).toBe(0)
    receipt.setCondition({ paperOut: false })
  })

  it('fails with printer_cover_open when the head stays open', async () => {
    label.clear()
    label.setCondition({ coverOpen: true })
    const job = await api.printRaw(ids.Label!, LABEL, 'zpl')
    const done = await api.waitForJob(job.print_job_id, ['failed', 'printed'])
    expect(done).toMatchObject({ status: 'failed', failure_reason: 'printer_cover_open' })
    expect(label.received().length).toBe(0)
    label.setCondition({ coverOpen: false })
  })

  it('fails with printer_unreachable when nothing answers at the printer address', async () => {
    const job = await api.printRaw(ids.Gone!, RECEIPT, 'escpos')
    await expect
      .poll(async () => (await api.job(job.print_job_id)).waiting_reason, { timeout: 10_000, interval: 25 })
      .toBe('printer_unreachable')
    const done = await api.waitForJob(job.print_job_id, ['failed', 'printed'])
    expect(done).toMatchObject({
      status: 'failed',
      failure_reason: 'printer_unreachable',
      waiting_reason: null,
    })
  })

  it('drops a reserved job that is cancelled before it prints', async () => {
    receipt.clear()
    receipt.setCondition({ paperOut: true })
    const job = await api.printRaw(ids.Receipt!, RECEIPT, 'escpos')
    await api.waitForJob(job.print_job_id, ['reserved'])
    const cancelled = await api.request<{ status: string }>(
      'POST',
      `/api/v1/print-jobs/${job.print_job_id}/cancel`,
    )
    expect(cancelled).toMatchObject({ status: 200, body: { status: 'cancelled' } })
    receipt.setCondition({ paperOut: false })
    const next = await api.printRaw(ids.Receipt!, Buffer.from('\x1b@after\n'), 'escpos')
    await api.waitForJob(next.print_job_id, ['printed'])
    expect(receipt.received().toString('latin1')).toBe('\x1b@after\n')
    expect((await api.job(job.print_job_id)).status).toBe('cancelled')
  })
})

describe('jobs left pending too long', { timeout: 60_000 }, () => {
  afterAll(() => stopAll())

  it('fail with `expired` instead of printing late', async () => {
    const cloud = await startCloudProcess({ env: { PENDING_JOB_EXPIRY_SECONDS: '1' } })
    const account = await setUpAccount(cloud)
    const api = new ApiClient(cloud.url, account.accessToken)
    const printer = await startPrinterSimulator({ language: 'escpos' })
    const hub = await startHubProcess({
      cloudUrl: cloud.url,
      enroll: account.enrollmentToken,
      printers: [printer.uri],
    })
    const printer_id = (await api.waitForPrinters(1))[0]!.printer_id
    await hub.stop()
    // Created once the cloud has the hub offline: a job offered to a hub that has just gone waits for that hub
    // to say whether it started (docs/job-lifecycle.md), and a loaded machine can record the hub's going late.
    await expect
      .poll(async () => (await api.printers()).map((p) => p.online), { timeout: 20_000 })
      .toEqual([false])
    const job = await api.printRaw(printer_id, RECEIPT, 'escpos')
    const done = await api.waitForJob(job.print_job_id, ['failed'], 40_000)
    expect(done).toMatchObject({ status: 'failed', failure_reason: 'expired' })
    const online = () =>
      logLines(cloud.logs).filter((line) => line.msg === 'hub online' && line.agent_id === hub.agentId)
    const onlineBefore = online().length
    const again = await startHubProcess({
      cloudUrl: cloud.url,
      dataDir: hub.dataDir,
      printers: [printer.uri],
    })
    // The cloud recorded the hub back, counting the unfinished jobs it offers it then: none. The expired job is
    // not offered, and an offer is the only way a job reaches a hub (the hub never had this one).
    await expect.poll(() => online().length, { timeout: 20_000 }).toBeGreaterThan(onlineBefore)
    expect(online()[onlineBefore]).toMatchObject({ reoffered: 0 })
    expect(printer.received().length).toBe(0)
    await printer.close()
    // With its cloud gone the hub keeps retrying, and still stops cleanly when told to.
    const lost = () => logLines(again.logs).filter((line) => line.msg === 'mqtt connection lost').length
    const lostBefore = lost()
    await cloud.kill()
    await expect.poll(lost, { timeout: 20_000 }).toBeGreaterThan(lostBefore)
    expect(await again.stop()).toBe(0)
  })
})
