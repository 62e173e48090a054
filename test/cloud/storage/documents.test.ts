import { randomUUID } from 'node:crypto'
import path from 'node:path'
import Database from 'better-sqlite3'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { resolveOptions } from '../../../cloud/print-jobs/submit.ts'
import { isDocumentPurgedError } from '../../../cloud/storage/documents.ts'
import { DATABASE_FILE, openStorage, type Storage } from '../../../cloud/storage/storage.ts'
import type { Document } from '../../../protocol/document.ts'
import type { PrintJobStatus } from '../../../protocol/enums.ts'
import type { PrintJob } from '../../../protocol/print-job.ts'
import { tempDir } from '../../helpers/temp-dir.ts'
import { RECEIPT_PRINTER } from '../test-cloud.ts'

const T0 = Date.parse('2026-03-01T00:00:00.000Z')
const HOUR = 3600_000
const iso = (ms: number) => new Date(ms).toISOString()
const QUOTA = 1_000_000

describe('document repository: quota and retention', () => {
  let dir = tempDir()
  let storage: Storage
  let sql: Database.Database
  let accountId: string
  let printerId: string

  beforeEach(() => {
    dir = tempDir()
    storage = openStorage(dir.path)
    sql = new Database(path.join(dir.path, DATABASE_FILE))
    accountId = storage.accounts.create('Shop').account_id
    const agent = storage.agents.insert({ account_id: accountId, name: 'hub' })
    printerId = storage.printers.insert({
      account_id: accountId,
      agent_id: agent.agent_id,
      name: 'Receipts',
      capabilities: RECEIPT_PRINTER,
    }).printer_id
  })
  afterEach(() => {
    sql.close()
    storage.close()
    dir.remove()
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
  const stored = (createdAt: number, size = 100, sha256?: string) => {
    const d = document(createdAt, size, sha256)
    expect(storage.documents.insertWithinQuota(accountId, d, QUOTA)).toBe(true)
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
  })
  /** A job of the document, left in `status` (finished at `completedAt` when given). */
  const jobOf = (d: Document, status: PrintJobStatus, completedAt: number | null = null) => {
    const j = job(d, T0)
    expect(storage.printJobs.insertWithinCapacity(accountId, j, 1000)).toBe(true)
    sql
      .prepare('UPDATE print_jobs SET status = ?, completed_at = ? WHERE print_job_id = ?')
      .run(status, completedAt === null ? null : iso(completedAt), j.print_job_id)
    return j
  }
  const purgedIds = () =>
    sql.prepare('SELECT document_id FROM documents WHERE purged_at IS NOT NULL').pluck().all()
  const queued = () => sql.prepare('SELECT sha256 FROM blob_deletions ORDER BY sha256').pluck().all()
  const purgeAt = (now: number) => storage.documents.purgeUnneeded(iso(now - 24 * HOUR), iso(now), 500)

  it('counts the bytes of retained documents per account and refuses one beyond the quota', () => {
    const other = storage.accounts.create('Other').account_id
    expect(storage.documents.insertWithinQuota(accountId, document(T0, 600), 1000)).toBe(true)
    expect(storage.documents.insertWithinQuota(other, document(T0, 900), 1000)).toBe(true)
    const refused = document(T0, 401)
    expect(storage.documents.insertWithinQuota(accountId, refused, 1000)).toBe(false)
    expect(storage.documents.insertWithinQuota(accountId, document(T0, 400), 1000)).toBe(true)

    expect(storage.documents.retainedBytes(accountId)).toBe(1000)
    expect(storage.documents.retainedBytes(other)).toBe(900)
    expect(storage.documents.findById(accountId, refused.document_id)).toBeUndefined()
    // The refused document's blob was written before the check: it is queued for deletion.
    expect(queued()).toEqual([refused.sha256])
  })

  it('purges what nothing needed within the retention, keeps what a job needs or used since', () => {
    const now = T0 + 48 * HOUR
    const neverPrinted = stored(T0)
    const printedLongAgo = stored(T0)
    jobOf(printedLongAgo, 'printed', T0 + HOUR)
    const printedRecently = stored(T0)
    jobOf(printedRecently, 'failed', now - HOUR)
    const pending = stored(T0)
    jobOf(pending, 'pending')
    const printing = stored(T0)
    jobOf(printing, 'printing')
    const oneOfTwoJobsPending = stored(T0)
    jobOf(oneOfTwoJobsPending, 'cancelled', T0 + HOUR)
    jobOf(oneOfTwoJobsPending, 'reserved')
    const uploadedRecently = stored(now - HOUR)

    expect(purgeAt(now)).toBe(2)

    expect(purgedIds().sort()).toEqual([neverPrinted.document_id, printedLongAgo.document_id].sort())
    for (const kept of [printedRecently, pending, printing, oneOfTwoJobsPending, uploadedRecently]) {
      expect(storage.documents.findById(accountId, kept.document_id)).toEqual(kept)
    }
    expect(storage.documents.retainedBytes(accountId)).toBe(500)
    expect(queued()).toEqual([neverPrinted.sha256, printedLongAgo.sha256].sort())
    // Repeating it (or another node running it) purges nothing twice.
    expect(purgeAt(now)).toBe(0)
    expect(storage.documents.retainedBytes(accountId)).toBe(500)
  })

  it('a purged document is not found, but its finished job still names it', () => {
    const d = stored(T0)
    const finished = jobOf(d, 'printed', T0 + HOUR)
    purgeAt(T0 + 48 * HOUR)

    expect(storage.documents.findById(accountId, d.document_id)).toBeUndefined()
    expect(storage.printJobs.findById(accountId, finished.print_job_id)).toMatchObject({
      print_job_id: finished.print_job_id,
      document_id: d.document_id,
      document_format: 'raw',
      status: 'printed',
    })
  })

  it('queues a shared blob only when the last retained document naming it is purged', () => {
    const shared = 'ab'.repeat(32)
    const old = stored(T0, 100, shared)
    const otherAccount = storage.accounts.create('Other').account_id
    const recent = document(T0 + 40 * HOUR, 100, shared)
    expect(storage.documents.insertWithinQuota(otherAccount, recent, QUOTA)).toBe(true)

    expect(purgeAt(T0 + 48 * HOUR)).toBe(1)
    expect(purgedIds()).toEqual([old.document_id])
    expect(queued()).toEqual([])

    expect(purgeAt(T0 + 72 * HOUR)).toBe(1)
    expect(queued()).toEqual([shared])
    expect(storage.documents.blobsToDelete(10)).toEqual([shared])
  })

  it('a queued blob that a new document names again leaves the queue', () => {
    const d = stored(T0)
    purgeAt(T0 + 48 * HOUR)
    expect(queued()).toEqual([d.sha256])

    stored(T0 + 48 * HOUR, 100, d.sha256)
    expect(storage.documents.blobsToDelete(10)).toEqual([])
    expect(queued()).toEqual([])
  })

  it('a job cannot be created on a purged document, even by a caller that found it before', () => {
    const d = stored(T0)
    purgeAt(T0 + 48 * HOUR)

    let thrown: unknown
    try {
      storage.printJobs.insertWithinCapacity(accountId, job(d, T0 + 48 * HOUR), 1000)
    } catch (error) {
      thrown = error
    }
    expect(isDocumentPurgedError(thrown)).toBe(true)
    expect(sql.prepare('SELECT count(*) FROM print_jobs').pluck().get()).toBe(0)
  })
})
