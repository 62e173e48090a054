import { afterEach, describe, expect, it } from 'vitest'
import type { PrintJob } from '../../protocol/print-job.ts'
import { freePort } from '../helpers/free-port.ts'
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy.ts'
import { type PrinterSimulator, startPrinterSimulator } from '../simulators/printer-simulator.ts'
import { ApiClient } from './api-client.ts'
import {
  type HubProcess,
  newTempDir,
  runningHubs,
  setUpAccount,
  startCloudProcess,
  startHubProcess,
  stopAll,
} from './harness.ts'
import { occurrences } from './receipts.ts'

/** A receipt whose text names its job, so that every copy of it at the printer can be counted. */
const receipt = (n: number) =>
  Buffer.from(`\x1b@JOB-${String(n).padStart(4, '0')} thank you\n\x1dVB\x00`, 'latin1')

/**
 * The invariant "never lose, never double" (docs/architecture.md: what keeps it safe): every job ends printed, or failed as `interrupted`
 * (its bytes may have reached the printer); a printed job's bytes are at the printer exactly once, an
 * interrupted one's at most once; nothing is printed twice and nothing is left behind.
 */
async function expectEachJobOnceAtMost(
  api: ApiClient,
  jobs: { job: PrintJob; bytes: Buffer }[],
  printer: PrinterSimulator,
) {
  const finals = await Promise.all(
    jobs.map(({ job }) => api.waitForJob(job.print_job_id, ['printed', 'failed', 'cancelled'], 60_000)),
  )
  const received = printer.received()
  const report = finals.map((final, i) => ({
    status: final.status,
    reason: final.failure_reason,
    copies: occurrences(received, jobs[i]!.bytes),
  }))
  for (const entry of report) {
    if (entry.status === 'printed') expect(entry).toEqual({ status: 'printed', reason: null, copies: 1 })
    else {
      expect(entry.status).toBe('failed')
      expect(entry.reason).toBe('interrupted')
      expect(entry.copies).toBeLessThanOrEqual(1)
    }
  }
  return report
}

describe('never lose, never double (real processes)', { timeout: 120_000 }, () => {
  let simulator: PrinterSimulator
  let proxy: TcpProxy | undefined
  afterEach(async () => {
    await stopAll()
    await simulator?.close()
    await proxy?.close()
    proxy = undefined
  })

  async function setUp(cloudEnv: Record<string, string> = {}, mqttPort?: number) {
    const cloud = await startCloudProcess({ env: cloudEnv, ...(mqttPort !== undefined && { mqttPort }) })
    const account = await setUpAccount(cloud)
    const api = new ApiClient(cloud.url, account.accessToken)
    simulator = await startPrinterSimulator({ language: 'escpos' })
    const hubDir = await newTempDir('e2e-hub-')
    const hub = await startHubProcess({
      cloudUrl: cloud.url,
      dataDir: hubDir,
      enroll: account.enrollmentToken,
      printers: [simulator.uri],
    })
    const [printer] = await api.waitForPrinters(1)
    return { cloud, api, hub, hubDir, printerId: printer!.printer_id }
  }

  it('survives kill -9 of the hub at any moment', async () => {
    const { cloud, api, hubDir, printerId } = await setUp()
    let hub: HubProcess | undefined
    const jobs: { job: PrintJob; bytes: Buffer }[] = []
    for (let n = 0; n < 40; n++) {
      const bytes = receipt(n)
      jobs.push({ job: await api.printRaw(printerId, bytes, 'escpos'), bytes })
    }
    // Kill the hub three times while jobs are printing, restarting it each time without a token.
    for (const after of [5, 15, 28]) {
      await expect
        .poll(() => occurrences(simulator.received(), Buffer.from('JOB-')), { timeout: 30_000, interval: 25 })
        .toBeGreaterThanOrEqual(after)
      const running = hub ?? runningHubs().at(-1)
      await running?.kill()
      hub = await startHubProcess({ cloudUrl: cloud.url, dataDir: hubDir, printers: [simulator.uri] })
    }
    const report = await expectEachJobOnceAtMost(api, jobs, simulator)
    expect(report.filter((r) => r.status === 'printed').length).toBeGreaterThanOrEqual(37)
  })

  it('loses nothing when the cloud restarts (kill -9) while jobs flow', async () => {
    const { cloud, api, printerId } = await setUp()
    const jobs: { job: PrintJob; bytes: Buffer }[] = []
    for (let n = 0; n < 15; n++) {
      const bytes = receipt(n)
      jobs.push({ job: await api.printRaw(printerId, bytes, 'escpos'), bytes })
    }
    await cloud.kill()
    const again = await startCloudProcess({
      dataDir: cloud.dataDir,
      port: cloud.port,
      mqttPort: cloud.mqttPort,
    })
    api.setBaseUrl(again.url)
    // The printer keeps its id across the restart.
    expect((await api.waitForPrinters(1)).map((p) => p.printer_id)).toEqual([printerId])
    for (let n = 15; n < 30; n++) {
      const bytes = receipt(n)
      jobs.push({ job: await api.printRaw(printerId, bytes, 'escpos'), bytes })
    }
    const report = await expectEachJobOnceAtMost(api, jobs, simulator)
    expect(report.every((r) => r.status === 'printed')).toBe(true)
  })

  it('loses nothing when the broker connection drops, and delivers what was sent meanwhile', async () => {
    const mqttPort = await freePort()
    proxy = await startTcpProxy(mqttPort)
    const { api, printerId } = await setUp({ MQTT_PUBLIC_URL: `mqtt://127.0.0.1:${proxy.port}` }, mqttPort)
    const jobs: { job: PrintJob; bytes: Buffer }[] = []
    for (let n = 0; n < 30; n++) {
      if (n === 10 || n === 20) {
        proxy.setDown(true)
        proxy.cutAll()
      }
      const bytes = receipt(n)
      jobs.push({ job: await api.printRaw(printerId, bytes, 'escpos'), bytes })
      if (n === 14 || n === 24) proxy.setDown(false)
    }
    const report = await expectEachJobOnceAtMost(api, jobs, simulator)
    expect(report.every((r) => r.status === 'printed')).toBe(true)
  })
})
