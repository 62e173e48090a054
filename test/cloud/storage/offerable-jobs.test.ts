import { describe, expect, it } from 'vitest'
import { ENGINES } from './engines.ts'
import { shopWithPrintersOnHubs, storeJob } from './stored-jobs.ts'

/**
 * printJobs.offerable (the dispatcher offers a new job with it): the job as dispatchable() when its hub is
 * online, with whether its account is active; nothing when the hub is offline. The same on both engines.
 */
describe.each(ENGINES)('offerable jobs on %s', (engine) => {
  const shop = shopWithPrintersOnHubs(engine)

  it('is the dispatchable job of an online hub, its account active', async () => {
    const job = await storeJob(shop.t.storage, shop.accountId, shop.printerOf.online)
    const dispatchable = await shop.t.storage.printJobs.dispatchable(job.print_job_id)
    expect(dispatchable?.status).toBe('pending')
    expect(await shop.t.storage.printJobs.offerable(job.print_job_id)).toEqual({
      ...dispatchable,
      account_active: true,
    })
  })

  it('is nothing for a job whose hub is offline, or no job at all', async () => {
    const job = await storeJob(shop.t.storage, shop.accountId, shop.printerOf.offline)
    expect(await shop.t.storage.printJobs.offerable(job.print_job_id)).toBeUndefined()
    expect(await shop.t.storage.printJobs.offerable('00000000-0000-4000-8000-000000000000')).toBeUndefined()
  })

  it('says when the account is suspended', async () => {
    const job = await storeJob(shop.t.storage, shop.accountId, shop.printerOf.online)
    await shop.t.db
      .updateTable('accounts')
      .set({ state: 'suspended' })
      .where('account_id', '=', shop.accountId)
      .execute()
    expect(await shop.t.storage.printJobs.offerable(job.print_job_id)).toMatchObject({
      print_job_id: job.print_job_id,
      account_active: false,
    })
  })
})
