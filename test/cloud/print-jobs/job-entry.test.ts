import { pino } from 'pino'
import { describe, expect, it } from 'vitest'
import { JOB_ENTRY, JobLifecycle, type NewPrintJob } from '../../../cloud/print-jobs/lifecycle.ts'
import { jobOfNewDocument, shopWithPrintersOnHubs } from '../storage/stored-jobs.ts'

/** docs/job-lifecycle.md: how a job enters the table (JOB_ENTRY), offered there or not. */
describe('a job entering the lifecycle', () => {
  const shop = shopWithPrintersOnHubs('sqlite')
  const at = new Date('2026-11-27T10:00:00.000Z')
  const newJob = async (printerId: string): Promise<NewPrintJob> => ({
    ...(await jobOfNewDocument(shop.t.storage, shop.accountId, printerId)),
    status: JOB_ENTRY.to,
  })
  const lines: Record<string, unknown>[] = []
  const log = pino(
    { base: null, timestamp: false },
    { write: (line: string) => lines.push(JSON.parse(line)) },
  )

  it('is stored pending, and offered with what the offer rule records when it goes to its hub', async () => {
    const { storage } = shop.t
    const lifecycle = new JobLifecycle(storage.printJobs)
    const [offered, unoffered] = [await newJob(shop.printerOf.online), await newJob(shop.printerOf.offline)]
    expect(
      await lifecycle.create(shop.accountId, offered, { capacity: 10, offered: true }, undefined, at),
    ).toEqual({ created: 'offered', offered_at: at.toISOString() })
    expect(
      await lifecycle.create(shop.accountId, unoffered, { capacity: 10, offered: false }, undefined, at),
    ).toEqual({ created: 'created', offered_at: null })
    const stored = async (job: NewPrintJob) => await storage.printJobs.dispatchable(job.print_job_id)
    expect(await stored(offered)).toMatchObject({ status: 'pending', offered_at: at.toISOString() })
    expect(await stored(unoffered)).toMatchObject({ status: 'pending', offered_at: null })
    // The entry made the offer's record: the offer rule, applied now, finds it made.
    expect(await lifecycle.offered(offered.print_job_id, new Date(), true)).toBe(false)
  })

  it('logs the job created, and nothing for one its full queue refuses', async () => {
    const { storage } = shop.t
    const lifecycle = new JobLifecycle(storage.printJobs, log)
    const [first, second] = [await newJob(shop.printerOf.online), await newJob(shop.printerOf.online)]
    lines.length = 0
    expect((await lifecycle.create(shop.accountId, first, { capacity: 1, offered: true })).created).toBe(
      'offered',
    )
    expect(await lifecycle.create(shop.accountId, second, { capacity: 1, offered: true })).toEqual({
      created: 'queue_full',
      offered_at: null,
    })
    expect(lines).toEqual([
      {
        level: 30,
        print_job_id: first.print_job_id,
        printer_id: first.printer_id,
        status: 'pending',
        msg: 'print job created',
      },
    ])
  })
})
