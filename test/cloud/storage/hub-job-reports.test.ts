import { describe, expect, it } from 'vitest'
import { JOB_RULES } from '../../../cloud/print-jobs/lifecycle.ts'
import { ENGINES } from './engines.ts'
import { shopWithPrintersOnHubs, storeJob } from './stored-jobs.ts'

/**
 * printJobs.apply with the hub that reports (the dispatcher applies a hub's acknowledgement, waiting reason or
 * status this way, in one statement): the change applies only to a job on a printer of that hub, and answers
 * with the cancel the cloud requested of it, which the hub is then told again. The same on both engines.
 */
describe.each(ENGINES)('hub job reports on %s', (engine) => {
  const shop = shopWithPrintersOnHubs(engine)

  it('applies the report of the job’s own hub, answering with the cancel requested of it', async () => {
    const job = await storeJob(shop.t.storage, shop.accountId, shop.printerOf.online)
    const at = new Date().toISOString()
    expect(
      await shop.t.storage.printJobs.apply(
        job.print_job_id,
        JOB_RULES.reserve,
        { reserved_at: at },
        shop.hubOf.online,
      ),
    ).toEqual({
      printer_id: shop.printerOf.online,
      status: 'reserved',
      created_at: job.created_at,
      failure_reason: null,
      cancel_requested_at: null,
      cancel_reason: null,
    })
    await shop.t.storage.printJobs.apply(job.print_job_id, JOB_RULES.requestCancel, {
      cancel_requested_at: at,
      cancel_reason: 'cancelled',
    })
    expect(
      await shop.t.storage.printJobs.apply(
        job.print_job_id,
        JOB_RULES.wait,
        { waiting_reason: 'paper_out' },
        shop.hubOf.online,
      ),
    ).toMatchObject({ status: 'reserved', cancel_requested_at: at, cancel_reason: 'cancelled' })
  })

  it('changes nothing when another hub reports on the job', async () => {
    const job = await storeJob(shop.t.storage, shop.accountId, shop.printerOf.online)
    const at = new Date().toISOString()
    expect(
      await shop.t.storage.printJobs.apply(
        job.print_job_id,
        JOB_RULES.print,
        { reserved_at: at, started_at: at, completed_at: at },
        shop.hubOf.offline,
      ),
    ).toBeUndefined()
    expect(await shop.t.storage.printJobs.dispatchable(job.print_job_id)).toMatchObject({
      status: 'pending',
      reserved_at: null,
      completed_at: null,
    })
  })

  it('applies changes asked together as each would apply alone, in the order asked for one job', async () => {
    const { storage } = shop.t
    const jobs = await Promise.all(
      Array.from({ length: 5 }, () => storeJob(storage, shop.accountId, shop.printerOf.online)),
    )
    const [a, b, c, d, e] = jobs.map((job) => job.print_job_id) as [string, string, string, string, string]
    const at = '2026-11-27T10:00:00.000Z'
    const later = '2026-11-27T10:00:05.000Z'
    const own = shop.hubOf.online
    const answers = await Promise.all([
      storage.printJobs.apply(a, JOB_RULES.reserve, { reserved_at: at }, own),
      storage.printJobs.apply(b, JOB_RULES.reserve, { reserved_at: later }, own),
      // Another hub's report on c changes nothing; the second change of a runs after its first.
      storage.printJobs.apply(c, JOB_RULES.reserve, { reserved_at: at }, shop.hubOf.offline),
      storage.printJobs.apply(
        a,
        JOB_RULES.print,
        { reserved_at: later, started_at: later, completed_at: later },
        own,
      ),
      storage.printJobs.apply(
        d,
        JOB_RULES.fail,
        {
          reserved_at: at,
          completed_at: at,
          failure_reason: 'paper_jam',
          failure_detail: 'jammed at the cutter',
        },
        own,
      ),
      storage.printJobs.apply(e, JOB_RULES.wait, { waiting_reason: 'paper_out' }, own),
      storage.printJobs.apply(b, JOB_RULES.offer, { offered_at: at }),
    ])
    const applied = (status: string, failure_reason: string | null = null) => ({
      printer_id: shop.printerOf.online,
      status,
      created_at: expect.any(String),
      failure_reason,
      cancel_requested_at: null,
      cancel_reason: null,
    })
    expect(answers).toEqual([
      applied('reserved'),
      applied('reserved'),
      undefined,
      applied('printed'),
      applied('failed', 'paper_jam'),
      applied('pending'),
      applied('reserved'),
    ])
    const stored = await Promise.all(jobs.map((job) => storage.printJobs.dispatchable(job.print_job_id)))
    expect(
      stored.map((job) => job && [job.status, job.reserved_at, job.started_at, job.completed_at]),
    ).toEqual([
      ['printed', at, later, later],
      ['reserved', later, null, null],
      ['pending', null, null, null],
      ['failed', at, null, at],
      ['pending', null, null, null],
    ])
    expect(stored[3]).toMatchObject({ failure_reason: 'paper_jam', failure_detail: 'jammed at the cutter' })
    expect(stored[4]).toMatchObject({ waiting_reason: 'paper_out' })
    expect(stored[1]).toMatchObject({ offered_at: at })
  })
})
