import { randomUUID } from 'node:crypto'
import type { Kysely } from 'kysely'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { isDocumentPurgedError } from '../../../cloud/storage/documents.ts'
import type { Database } from '../../../cloud/storage/schema.ts'
import type { Storage } from '../../../cloud/storage/storage.ts'
import { resolveOptions } from '../../../print-api/route-check.ts'
import type { Document } from '../../../protocol/document.ts'
import type { PrintJobStatus } from '../../../protocol/enums.ts'
import type { PrintJob } from '../../../protocol/print-job.ts'
import { RECEIPT_PRINTER } from '../test-cloud.ts'
import { ENGINES, storageEngine, type TestStorage } from './engines.ts'
import { insertWithinCapacity } from './stored-jobs.ts'

const T0 = Date.parse('2026-03-01T00:00:00.000Z')
const HOUR = 3600_000
const iso = (ms: number) => new Date(ms).toISOString()
const QUOTA = 1_000_000

describe.each(ENGINES)('document repository on %s: quota and retention', (engine) => {
  const engineUnderTest = storageEngine(engine)
  let opened: TestStorage
  let storage: Storage
  let db: Kysely<Database>
  let accountId: string
  let printerId: string

  beforeEach(async () => {
    opened = await engineUnderTest.open()
    storage = opened.storage
    db = opened.db
    accountId = (await storage.accounts.create('Shop')).account_id
    const agent = await storage.agents.insert({ account_id: accountId, name: 'hub' })
    printerId = (
      await storage.printers.insert({
        account_id: accountId,
        agent_id: agent.agent_id,
        name: 'Receipts',
        capabilities: RECEIPT_PRINTER,
      })
    ).printer_id
  })
  afterEach(async () => {
    await opened.close()
  })

  const document = (createdAt: number, size = 100, sha256 = randomUUID().replaceAll('-', '')): Document => ({
    document_id: randomUUID(),
    document_mime_type: 'application/vnd.escpos',
    document_format: 'raw',
    document_raw_language: 'escpos',
    size_bytes: size,
    sha256,
    filename: null,
    created_at: iso(createdAt),
  })
  const stored = async (createdAt: number, size = 100, sha256?: string) => {
    const d = document(createdAt, size, sha256)
    expect(await storage.documents.insertWithinQuota(accountId, d, QUOTA)).toBe(true)
    return d
  }
  const job = (d: Document, createdAt: number): PrintJob => ({
    print_job_id: randomUUID(),
    document_id: d.document_id,
    document_mime_type: d.document_mime_type,
    document_format: d.document_format,
    document_raw_language: d.document_raw_language,
    printer_id: printerId,
    status: 'pending',
    ...resolveOptions({}),
    created_at: iso(createdAt),
    reserved_at: null,
    started_at: null,
    completed_at: null,
    failure_reason: null,
    failure_detail: null,
    waiting_reason: null,
    origin: 'cloud',
    duplicate_of: null,
  })
  /** A job of the document, left in `status` (finished at `completedAt` when given). */
  const jobOf = async (d: Document, status: PrintJobStatus, completedAt: number | null = null) => {
    const j = job(d, T0)
    expect(await insertWithinCapacity(storage, accountId, j, 1000)).toBe(true)
    await db
      .updateTable('print_jobs')
      .set({ status, completed_at: completedAt === null ? null : iso(completedAt) })
      .where('print_job_id', '=', j.print_job_id)
      .execute()
    return j
  }
  const purgedIds = async () =>
    (await db.selectFrom('documents').select('document_id').where('purged_at', 'is not', null).execute()).map(
      (row) => row.document_id,
    )
  const queued = async () =>
    (await db.selectFrom('blob_deletions').select('sha256').orderBy('sha256').execute()).map(
      (row) => row.sha256,
    )
  const purgeAt = async (now: number) =>
    await storage.documents.purgeUnneeded(iso(now - 24 * HOUR), iso(now), 500)

  it('writes documents asked together in one transaction, each account counted in the order asked', async () => {
    const other = (await storage.accounts.create('Other')).account_id
    const transactions = vi.spyOn(db, 'transaction')
    const asked = [
      [accountId, document(T0, 600)],
      [other, document(T0, 900)],
      [accountId, document(T0, 401)],
      [accountId, document(T0, 400)],
      [other, document(T0, 101)],
    ] as const
    const answers = await Promise.all(
      asked.map(([account, d]) => storage.documents.insertWithinQuota(account, d, 1000)),
    )
    expect(transactions).toHaveBeenCalledTimes(1)
    transactions.mockRestore()
    expect(answers).toEqual([true, true, false, true, false])
    expect(await storage.documents.retainedBytes(accountId)).toBe(1000)
    expect(await storage.documents.retainedBytes(other)).toBe(900)
    const found = await Promise.all(
      asked.map(([account, d]) => storage.documents.findById(account, d.document_id)),
    )
    expect(found.map((d) => d !== undefined)).toEqual([true, true, false, true, false])
  })

  it('counts the bytes of retained documents per account and refuses one beyond the quota', async () => {
    const other = (await storage.accounts.create('Other')).account_id
    expect(await storage.documents.insertWithinQuota(accountId, document(T0, 600), 1000)).toBe(true)
    expect(await storage.documents.insertWithinQuota(other, document(T0, 900), 1000)).toBe(true)
    const refused = document(T0, 401)
    expect(await storage.documents.insertWithinQuota(accountId, refused, 1000)).toBe(false)
    expect(await storage.documents.insertWithinQuota(accountId, document(T0, 400), 1000)).toBe(true)

    expect(await storage.documents.retainedBytes(accountId)).toBe(1000)
    expect(await storage.documents.retainedBytes(other)).toBe(900)
    expect(await storage.documents.findById(accountId, refused.document_id)).toBeUndefined()
    // The refused document's blob was written before the check: it is queued for deletion.
    expect(await queued()).toEqual([refused.sha256])
  })

  it('purges what nothing needed within the retention, keeps what a job needs or used since', async () => {
    const now = T0 + 48 * HOUR
    const neverPrinted = await stored(T0)
    const printedLongAgo = await stored(T0)
    await jobOf(printedLongAgo, 'printed', T0 + HOUR)
    const printedRecently = await stored(T0)
    await jobOf(printedRecently, 'failed', now - HOUR)
    const pending = await stored(T0)
    await jobOf(pending, 'pending')
    const printing = await stored(T0)
    await jobOf(printing, 'printing')
    const oneOfTwoJobsPending = await stored(T0)
    await jobOf(oneOfTwoJobsPending, 'cancelled', T0 + HOUR)
    await jobOf(oneOfTwoJobsPending, 'reserved')
    const uploadedRecently = await stored(now - HOUR)

    expect(await purgeAt(now)).toBe(2)

    expect((await purgedIds()).sort()).toEqual([neverPrinted.document_id, printedLongAgo.document_id].sort())
    for (const kept of [printedRecently, pending, printing, oneOfTwoJobsPending, uploadedRecently]) {
      expect(await storage.documents.findById(accountId, kept.document_id)).toEqual(kept)
    }
    expect(await storage.documents.retainedBytes(accountId)).toBe(500)
    expect(await queued()).toEqual([neverPrinted.sha256, printedLongAgo.sha256].sort())
    // Repeating it (or another node running it) purges nothing twice.
    expect(await purgeAt(now)).toBe(0)
    expect(await storage.documents.retainedBytes(accountId)).toBe(500)
  })

  it("keeps a small document's bytes in its row for its account only, and drops them with the purge", async () => {
    const bytes = Buffer.from([0x1b, 0x40, 0x00, 0xff, 0x0a])
    const small = document(T0, bytes.length)
    expect(await storage.documents.insertWithinQuota(accountId, small, QUOTA, bytes)).toBe(true)
    const inFile = await stored(T0)
    const other = (await storage.accounts.create('Other')).account_id

    expect((await storage.documents.findWithContent(accountId, small.document_id))?.content).toEqual(bytes)
    expect((await storage.documents.findWithContent(other, small.document_id))?.content).toBeUndefined()
    expect((await storage.documents.findWithContent(accountId, inFile.document_id))?.content).toBeUndefined()
    expect(await storage.documents.findById(accountId, small.document_id)).toEqual(small)

    const refused = document(T0, QUOTA)
    expect(await storage.documents.insertWithinQuota(accountId, refused, QUOTA, Buffer.alloc(QUOTA))).toBe(
      false,
    )
    // Neither a refused document nor a purged one kept in its row has a file to delete.
    expect(await queued()).toEqual([])

    expect(await purgeAt(T0 + 48 * HOUR)).toBe(2)
    expect(await queued()).toEqual([inFile.sha256])
    expect((await storage.documents.findWithContent(accountId, small.document_id))?.content).toBeUndefined()
    const row = await db
      .selectFrom('documents')
      .select('content')
      .where('document_id', '=', small.document_id)
      .executeTakeFirstOrThrow()
    expect(row.content).toBeNull()
  })

  it('a purged document is not found, but its finished job still names it', async () => {
    const d = await stored(T0)
    const finished = await jobOf(d, 'printed', T0 + HOUR)
    await purgeAt(T0 + 48 * HOUR)

    expect(await storage.documents.findById(accountId, d.document_id)).toBeUndefined()
    expect(await storage.printJobs.findById(accountId, finished.print_job_id)).toMatchObject({
      print_job_id: finished.print_job_id,
      document_id: d.document_id,
      document_format: 'raw',
      status: 'printed',
    })
  })

  it('queues a shared blob only when the last retained document naming it is purged', async () => {
    const shared = 'ab'.repeat(32)
    const old = await stored(T0, 100, shared)
    const otherAccount = (await storage.accounts.create('Other')).account_id
    const recent = document(T0 + 40 * HOUR, 100, shared)
    expect(await storage.documents.insertWithinQuota(otherAccount, recent, QUOTA)).toBe(true)

    expect(await purgeAt(T0 + 48 * HOUR)).toBe(1)
    expect(await purgedIds()).toEqual([old.document_id])
    expect(await queued()).toEqual([])

    expect(await purgeAt(T0 + 72 * HOUR)).toBe(1)
    expect(await queued()).toEqual([shared])
    expect(await storage.documents.blobsToDelete(10)).toEqual([shared])
  })

  it('a queued blob that a new document names again leaves the queue', async () => {
    const d = await stored(T0)
    await purgeAt(T0 + 48 * HOUR)
    expect(await queued()).toEqual([d.sha256])

    await stored(T0 + 48 * HOUR, 100, d.sha256)
    expect(await storage.documents.blobsToDelete(10)).toEqual([])
    expect(await queued()).toEqual([])
  })

  it('a job cannot be created on a purged document, even by a caller that found it before', async () => {
    const d = await stored(T0)
    await purgeAt(T0 + 48 * HOUR)

    let thrown: unknown
    try {
      await insertWithinCapacity(storage, accountId, job(d, T0 + 48 * HOUR), 1000)
    } catch (error) {
      thrown = error
    }
    expect(isDocumentPurgedError(thrown)).toBe(true)
    expect(await db.selectFrom('print_jobs').select('print_job_id').execute()).toEqual([])
  })
})
