import { describe, expect, it, vi } from 'vitest'
import { isDocumentPurgedError } from '../../../cloud/storage/documents.ts'
import { ENGINES } from './engines.ts'
import {
  insertWithinCapacity,
  jobOfNewDocument,
  shopWithPrintersOnHubs,
  storeJob,
  unstoredJob,
} from './stored-jobs.ts'

/**
 * printJobs.create with jobs asked together (the create path under load: one transaction for
 * many jobs): each job is judged against its own account's queue as if inserted alone in the order asked,
 * carries its Idempotency-Key answer, and one that cannot be inserted fails alone. The same on both engines.
 */
describe.each(ENGINES)('jobs inserted together on %s', (engine) => {
  const shop = shopWithPrintersOnHubs(engine)

  const secondAccount = async () => {
    const { storage } = shop.t
    const accountId = (await storage.accounts.create('Second shop')).account_id
    const agent = await storage.agents.insert({ account_id: accountId, name: 'hub', online: true })
    const printer = await storage.printers.insert({
      account_id: accountId,
      agent_id: agent.agent_id,
      name: 'Receipts',
      capabilities: {
        ...(await storage.printers.findById(shop.accountId, shop.printerOf.online))!.capabilities,
      },
      reported: true,
    })
    return { accountId, printerId: printer.printer_id }
  }
  const storedIds = async () =>
    (await shop.t.db.selectFrom('print_jobs').select('print_job_id').orderBy('seq').execute()).map(
      (row) => row.print_job_id,
    )

  it('fills each account’s queue up to its capacity, in the order the jobs were asked', async () => {
    const { storage } = shop.t
    const second = await secondAccount()
    const queued = await storeJob(storage, shop.accountId, shop.printerOf.online)
    // A finished job does not count against the queue.
    await storeJob(storage, shop.accountId, shop.printerOf.online, { status: 'printed' })
    const first = await Promise.all(
      [1, 2, 3].map(() => jobOfNewDocument(storage, shop.accountId, shop.printerOf.online)),
    )
    const other = await Promise.all(
      [1, 2].map(() => jobOfNewDocument(storage, second.accountId, second.printerId)),
    )
    const asked = [first[0]!, other[0]!, first[1]!, other[1]!, first[2]!]
    const answers = await Promise.all(
      asked.map((job) =>
        insertWithinCapacity(
          storage,
          job === other[0] || job === other[1] ? second.accountId : shop.accountId,
          job,
          2,
        ),
      ),
    )
    expect(answers).toEqual([true, true, false, true, false])
    const ids = await storedIds()
    expect(ids).toContain(queued.print_job_id)
    expect(ids.slice(-3)).toEqual([first[0]!, other[0]!, other[1]!].map((job) => job.print_job_id))
    expect(await storage.printJobs.findById(shop.accountId, first[0]!.print_job_id)).toEqual(first[0])
  })

  it('writes each job’s Idempotency-Key answer with it', async () => {
    const { storage } = shop.t
    const jobs = await Promise.all(
      [1, 2].map(() => jobOfNewDocument(storage, shop.accountId, shop.printerOf.online)),
    )
    const scopes = jobs.map((job) => ({
      accountId: shop.accountId,
      endpoint: 'POST /api/v1/print-jobs',
      key: `order-${job.print_job_id}`,
    }))
    const now = Date.now()
    for (const scope of scopes)
      expect(await storage.idempotency.begin(scope, 'fingerprint', now, 60_000, 3600_000)).toEqual({
        outcome: 'started',
      })
    await Promise.all(
      jobs.map((job, i) =>
        storage.printJobs.create(shop.accountId, job, {
          capacity: 100,
          answer: { scope: scopes[i]!, statusCode: 201, body: JSON.stringify(job) },
        }),
      ),
    )
    for (const [i, scope] of scopes.entries())
      expect(await storage.idempotency.begin(scope, 'fingerprint', now, 60_000, 3600_000)).toEqual({
        outcome: 'completed',
        statusCode: 201,
        body: JSON.stringify(jobs[i]),
      })
  })

  it('fails only the job whose document was purged; the others asked with it are inserted', async () => {
    const { storage, db } = shop.t
    const jobs = await Promise.all(
      [1, 2, 3].map(() => jobOfNewDocument(storage, shop.accountId, shop.printerOf.online)),
    )
    await db
      .updateTable('documents')
      .set({ purged_at: new Date().toISOString() })
      .where('document_id', '=', jobs[1]!.document_id)
      .execute()
    const answers = await Promise.allSettled(
      jobs.map((job) => insertWithinCapacity(storage, shop.accountId, job, 100)),
    )
    expect(answers.map((answer) => answer.status)).toEqual(['fulfilled', 'rejected', 'fulfilled'])
    expect(isDocumentPurgedError((answers[1] as PromiseRejectedResult).reason)).toBe(true)
    expect(await storedIds()).toEqual([jobs[0]!.print_job_id, jobs[2]!.print_job_id])
  })

  it('stores a new document with its job in the job’s transaction, within its account’s quota', async () => {
    const { storage, db } = shop.t
    const second = await secondAccount()
    const asked = [
      { accountId: shop.accountId, ...unstoredJob(shop.printerOf.online, {}, 600) },
      { accountId: second.accountId, ...unstoredJob(second.printerId, {}, 900) },
      { accountId: shop.accountId, ...unstoredJob(shop.printerOf.online, {}, 401) },
      { accountId: shop.accountId, ...unstoredJob(shop.printerOf.online, {}, 400) },
    ]
    const transactions = vi.spyOn(db, 'transaction')
    const answers = await Promise.all(
      asked.map(({ accountId, document, printJob }) =>
        storage.printJobs.create(accountId, printJob, {
          capacity: 100,
          document: { document, content: Buffer.alloc(document.size_bytes, 0x41), quotaBytes: 1000 },
        }),
      ),
    )
    expect(transactions).toHaveBeenCalledTimes(1)
    transactions.mockRestore()
    expect(answers).toEqual(['created', 'created', 'quota_exceeded', 'created'])
    expect(await storage.documents.retainedBytes(shop.accountId)).toBe(1000)
    expect(await storage.documents.retainedBytes(second.accountId)).toBe(900)
    expect(await storedIds()).toEqual([0, 1, 3].map((i) => asked[i]!.printJob.print_job_id))
    // The refused job's document is not stored either; the others are, with their bytes in their rows.
    expect(await storage.documents.findById(shop.accountId, asked[2]!.document.document_id)).toBeUndefined()
    const kept = await storage.documents.findWithContent(second.accountId, asked[1]!.document.document_id)
    expect(kept).toEqual({ document: asked[1]!.document, content: Buffer.alloc(900, 0x41) })
  })

  it('stores a job offered when asked to, unless its account is not active', async () => {
    const { storage, db } = shop.t
    const second = await secondAccount()
    await db
      .updateTable('accounts')
      .set({ state: 'suspended' })
      .where('account_id', '=', second.accountId)
      .execute()
    const at = '2026-11-27T10:00:00.000Z'
    const [offered, unoffered, held] = [
      await jobOfNewDocument(storage, shop.accountId, shop.printerOf.online),
      await jobOfNewDocument(storage, shop.accountId, shop.printerOf.offline),
      await jobOfNewDocument(storage, second.accountId, second.printerId),
    ]
    expect(
      await Promise.all([
        storage.printJobs.create(shop.accountId, offered, { capacity: 10, offer: { offered_at: at } }),
        storage.printJobs.create(shop.accountId, unoffered, { capacity: 10 }),
        storage.printJobs.create(second.accountId, held, { capacity: 10, offer: { offered_at: at } }),
      ]),
    ).toEqual(['offered', 'created', 'created'])
    const offeredAt = async (job: { print_job_id: string }) =>
      (await storage.printJobs.dispatchable(job.print_job_id))?.offered_at
    expect([await offeredAt(offered), await offeredAt(unoffered), await offeredAt(held)]).toEqual([
      at,
      null,
      null,
    ])
  })
})
