import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { ENGINES, storageEngine, type TestStorage } from './engines.ts'
import { printersOnHubs, storeJob } from './stored-jobs.ts'

/**
 * printJobs.offerable (the dispatcher offers a new job with it): the job as dispatchable() when its hub is
 * online, with whether its account is active; nothing when the hub is offline. The same on both engines.
 */
describe.each(ENGINES)('offerable jobs on %s', (engine) => {
  const engineUnderTest = storageEngine(engine)
  let t: TestStorage
  let accountId: string
  let printerOf: Record<'online' | 'offline', string>

  beforeEach(async () => {
    t = await engineUnderTest.open()
    accountId = (await t.storage.accounts.create('Shop')).account_id
    printerOf = await printersOnHubs(t.storage, accountId)
  })
  afterEach(async () => {
    await t.close()
  })

  it('is the dispatchable job of an online hub, its account active', async () => {
    const job = await storeJob(t.storage, accountId, printerOf.online)
    const dispatchable = await t.storage.printJobs.dispatchable(job.print_job_id)
    expect(dispatchable?.status).toBe('pending')
    expect(await t.storage.printJobs.offerable(job.print_job_id)).toEqual({
      ...dispatchable,
      account_active: true,
    })
  })

  it('is nothing for a job whose hub is offline, or no job at all', async () => {
    const job = await storeJob(t.storage, accountId, printerOf.offline)
    expect(await t.storage.printJobs.offerable(job.print_job_id)).toBeUndefined()
    expect(await t.storage.printJobs.offerable('00000000-0000-4000-8000-000000000000')).toBeUndefined()
  })

  it('says when the account is suspended', async () => {
    const job = await storeJob(t.storage, accountId, printerOf.online)
    await t.db
      .updateTable('accounts')
      .set({ state: 'suspended' })
      .where('account_id', '=', accountId)
      .execute()
    expect(await t.storage.printJobs.offerable(job.print_job_id)).toMatchObject({
      print_job_id: job.print_job_id,
      account_active: false,
    })
  })
})
