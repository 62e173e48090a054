import { randomUUID } from 'node:crypto'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { JobLifecycle } from '../../../cloud/print-jobs/lifecycle.ts'
import { resolveOptions } from '../../../cloud/print-jobs/submit.ts'
import type { PrintJob } from '../../../protocol/print-job.ts'
import { RECEIPT_PRINTER } from '../test-cloud.ts'
import { ENGINES, storageEngine, type TestStorage } from './engines.ts'

/** printJobs.findDetails (the console's job page): the account's job with its cancel request, on both engines. */
describe.each(ENGINES)('job details on %s', (engine) => {
  const engineUnderTest = storageEngine(engine)
  let t: TestStorage

  beforeEach(async () => {
    t = await engineUnderTest.open()
  })
  afterEach(async () => {
    await t.close()
  })

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
    const document = {
      document_id: randomUUID(),
      document_mime_type: 'application/vnd.escpos',
      document_format: 'raw' as const,
      document_raw_language: 'escpos' as const,
      size_bytes: 10,
      sha256: randomUUID().replaceAll('-', ''),
      filename: null,
      created_at: new Date().toISOString(),
    }
    expect(await t.storage.documents.insertWithinQuota(accountId, document, 1e9)).toBe(true)
    const job: PrintJob = {
      print_job_id: randomUUID(),
      document_id: document.document_id,
      document_mime_type: document.document_mime_type,
      document_format: document.document_format,
      document_raw_language: document.document_raw_language,
      printer_id: printer.printer_id,
      status: 'pending',
      ...resolveOptions({}),
      created_at: new Date().toISOString(),
      reserved_at: null,
      started_at: null,
      completed_at: null,
      failure_reason: null,
      failure_detail: null,
      waiting_reason: null,
    }
    expect(await t.storage.printJobs.insertWithinCapacity(accountId, job, 1000)).toBe(true)
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
