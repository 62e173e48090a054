import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { OFFER_CONTENT_MAX_BYTES } from '../../protocol/hub-messages.ts'
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

// A hub that is told to slow down (429 with Retry-After) waits and carries on: a quota never fails a job.
describe('a hub over its quota, end to end through real processes', () => {
  let cloud: CloudProcess
  let hub: HubProcess
  let api: ApiClient
  let printer: PrinterSimulator
  let printerId: string

  beforeAll(async () => {
    // One agent-API request per hub per second: the second of two downloads in a row gets 429.
    cloud = await startCloudProcess({ env: { RATE_LIMIT_PER_HUB: '1', RATE_LIMIT_WINDOW_SECONDS: '1' } })
    const account = await setUpAccount(cloud)
    api = new ApiClient(cloud.url, account.accessToken)
    printer = await startPrinterSimulator({ language: 'escpos' })
    hub = await startHubProcess({
      cloudUrl: cloud.url,
      enroll: account.enrollmentToken,
      printers: [`${printer.uri}&name=Receipts`],
    })
    printerId = (await api.waitForPrinters(1))[0]!.printer_id
  })
  afterAll(async () => {
    await stopAll()
    await printer?.close()
  })

  it('prints every job of a burst, in order, waiting out each 429 instead of failing the job', async () => {
    // Distinct documents above OFFER_CONTENT_MAX_BYTES, so that each job needs a download of its own (an offer
    // carries a smaller document's bytes).
    const receipts = [1, 2, 3].map((n) =>
      Buffer.from(`\x1b@Order ${n}\n${'-'.repeat(OFFER_CONTENT_MAX_BYTES)}\n\x1dVB\x00`, 'latin1'),
    )
    const jobs = []
    for (const receipt of receipts) jobs.push(await api.printUploaded(printerId, receipt, 'escpos'))
    for (const job of jobs) {
      const done = await api.waitForJob(job.print_job_id, ['printed', 'failed', 'cancelled'], 30_000)
      expect(done).toMatchObject({ status: 'printed', failure_reason: null })
    }
    expect(printer.received()).toEqual(Buffer.concat(receipts))
    const waits = hub.logs
      .join('')
      .split('\n')
      .filter((line) => line.includes('cloud asked to retry the download later'))
    expect(waits.length).toBeGreaterThanOrEqual(1)
    expect(JSON.parse(waits[0]!)).toMatchObject({ status: 429, retry_after_ms: 1000 })
  })
})
