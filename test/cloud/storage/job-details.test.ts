import { randomUUID } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { JobLifecycle } from '../../../cloud/print-jobs/lifecycle.ts'
import { RECEIPT_PRINTER } from '../test-cloud.ts'
import { ENGINES, storageForEachTest } from './engines.ts'
import { storeJob } from './stored-jobs.ts'

/** printJobs.findDetails (the console's job page): the account's job with its cancel request, on both engines. */
describe.each(ENGINES)('job details on %s', (engine) => {
  const t = storageForEachTest(engine)

  /** An account with one printer and one pending job on it. */
  const accountWithJob = async () => {
    const accountId = (await t.storage.accounts.create('Shop')).account_id
    const agent = await t.storage.agents.insert({ account_id: accountId, name: 'hub', online: true })
    const printer = await t.storage.printers.insert({
      account_id: accountId,
      agent_id: agent.agent_id,
      name: 'Receipts',
      capabilities: RECEIPT_PRINTER,
    })
    const job = await storeJob(t.storage, accountId, printer.printer_id)
    return { accountId, job }
  }

  it('gives the job as findById does, with the cancel requested of its hub, and nothing to another account', async () => {
    const { accountId, job } = await accountWithJob()
    const other = await accountWithJob()
    const id = job.print_job_id
    expect(await t.storage.printJobs.findDetails(accountId, id)).toEqual({
      ...(await t.storage.printJobs.findById(accountId, id)),
      cancel_requested_at: null,
      cancel_reason: null,
    })

    const lifecycle = new JobLifecycle(t.storage.printJobs)
    const at = new Date('2026-11-24T10:00:00.000Z')
    expect(await lifecycle.offered(id, at)).toBe(true)
    expect(await lifecycle.requestCancel(id, 'cancelled', at)).toBe(true)
    expect(await t.storage.printJobs.findDetails(accountId, id)).toMatchObject({
      print_job_id: id,
      status: 'pending',
      cancel_requested_at: at.toISOString(),
      cancel_reason: 'cancelled',
    })

    expect(await t.storage.printJobs.findDetails(other.accountId, id)).toBeUndefined()
    expect(await t.storage.printJobs.findDetails(accountId, other.job.print_job_id)).toBeUndefined()
    expect(await t.storage.printJobs.findDetails(accountId, randomUUID())).toBeUndefined()
  })
})
