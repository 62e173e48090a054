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
})
