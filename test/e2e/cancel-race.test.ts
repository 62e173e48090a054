import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { PrintJob } from '../../protocol/print-job.ts'
import { type PrinterSimulator, startPrinterSimulator } from '../simulators/printer-simulator.ts'
import { ApiClient } from './api-client.ts'
import { type CloudProcess, setUpAccount, startCloudProcess, startHubProcess, stopAll } from './harness.ts'
import { namedReceipt, occurrences, seededRandom } from './receipts.ts'

const JOBS = 240
const SEED = Number(process.env.RACE_SEED ?? Date.now() % 1_000_000)

/**
 * Issue 6, point 1: a cancel and a print that cross never disagree with the paper. Hundreds of cancels are
 * sent at random moments around the moment a real hub starts printing each job; afterwards a job reported
 * `cancelled` has no byte at the printer, a `printed` one has exactly one copy, and each cancel's answer
 * agrees with both: 200 only for a job that stayed off paper, 409 for one that was printing or done.
 */
describe(`cancels racing prints on a real hub (seed ${SEED})`, { timeout: 180_000 }, () => {
  let cloud: CloudProcess
  let api: ApiClient
  let printers: PrinterSimulator[]
  let printerIds: string[]

  beforeAll(async () => {
    cloud = await startCloudProcess()
    const account = await setUpAccount(cloud)
    api = new ApiClient(cloud.url, account.accessToken)
    printers = [
      await startPrinterSimulator({ language: 'escpos' }),
      await startPrinterSimulator({ language: 'escpos' }),
    ]
    await startHubProcess({
      cloudUrl: cloud.url,
      enroll: account.enrollmentToken,
      printers: printers.map((p) => p.uri),
    })
    printerIds = (await api.waitForPrinters(2)).map((p) => p.printer_id)
  })
  afterAll(async () => {
    await stopAll()
    await Promise.all(printers.map((p) => p.close()))
  })

  it('never reports cancelled what reached paper, nor printed what did not', async () => {
    const next = seededRandom(SEED)
    const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))
    const outcomes: {
      job: PrintJob
      bytes: Buffer
      head: Buffer
      cancel: number | null
      cancelBody: PrintJob | null
    }[] = []
    // Jobs go out a few at a time; each gets a cancel after a random delay of 0–40 ms, or none at all, so
    // cancels land before the offer, while the hub spools it, around `printing`, and after it printed.
    for (let n = 0; n < JOBS; n += 8) {
      await Promise.all(
        Array.from({ length: Math.min(8, JOBS - n) }, async (_, i) => {
          const { bytes, head } = namedReceipt(`RACE-${SEED}-${n + i}`)
          const job = await api.printRaw(printerIds[(n + i) % 2]!, bytes, 'escpos')
          const entry = {
            job,
            bytes,
            head,
            cancel: null as number | null,
            cancelBody: null as PrintJob | null,
          }
          outcomes.push(entry)
          if (next() < 0.2) return
          await sleep(Math.floor(next() * 40))
          const res = await api.request<PrintJob>('POST', `/api/v1/print-jobs/${job.print_job_id}/cancel`)
          entry.cancel = res.status
          entry.cancelBody = res.body
        }),
      )
    }
    const finals = await Promise.all(
      outcomes.map((o) => api.waitForJob(o.job.print_job_id, ['printed', 'failed', 'cancelled'], 60_000)),
    )
    const received = Buffer.concat(printers.map((p) => p.received()))
    const wrong: unknown[] = []
    const tally = { printed: 0, cancelled: 0, lostRace: 0, confirmed: 0, unconfirmed: 0 }
    finals.forEach((final, i) => {
      const { bytes, head, cancel, cancelBody } = outcomes[i]!
      // Whole copies, and copies that started at all (a cancelled job may not have even one byte there).
      const copies = occurrences(received, bytes)
      const started = occurrences(received, head)
      const entry = {
        id: final.print_job_id,
        status: final.status,
        copies,
        started,
        cancel,
        answered: cancelBody,
      }
      if (final.status === 'printed') tally.printed++
      if (final.status === 'cancelled') tally.cancelled++
      if (cancel === 409) tally.lostRace++
      if (cancel === 200) tally.confirmed++
      if (cancel === 202) tally.unconfirmed++
      const agrees =
        (final.status === 'printed' && copies === 1 && started === 1 && cancel !== 200) ||
        (final.status === 'cancelled' && started === 0 && cancel !== 409 && cancel !== null)
      const answerAgrees =
        cancel === null ||
        (cancel === 200 && cancelBody?.status === 'cancelled') ||
        (cancel === 409 && final.status === 'printed') ||
        cancel === 202
      if (!agrees || !answerAgrees) wrong.push(entry)
    })
    console.info(`cancel race (seed ${SEED}): ${JSON.stringify(tally)}`)
    expect(wrong).toEqual([])
    // The race was really run: some cancels won and some lost.
    expect(tally.cancelled).toBeGreaterThan(0)
    expect(tally.printed).toBeGreaterThan(0)
  })
})
