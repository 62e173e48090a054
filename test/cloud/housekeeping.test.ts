import path from 'node:path'
import Database from 'better-sqlite3'
import { type Logger, pino } from 'pino'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { createDocumentIntake, type DocumentIntake } from '../../cloud/documents/intake.ts'
import { Housekeeping } from '../../cloud/housekeeping/housekeeping.ts'
import { type BlobStore, createBlobStore } from '../../cloud/storage/blob-store.ts'
import { DATABASE_FILE, openStorage, type Storage } from '../../cloud/storage/storage.ts'
import { resolveOptions } from '../../print-api/route-check.ts'
import { hashSecret } from '../../print-api/secrets.ts'
import type { Document } from '../../protocol/document.ts'
import type { PrintJobStatus } from '../../protocol/enums.ts'
import { OFFER_CONTENT_MAX_BYTES } from '../../protocol/hub-messages.ts'
import { tempDir } from '../helpers/temp-dir.ts'
import { insertWithinCapacity } from './storage/stored-jobs.ts'
import { ALL_SCOPES, RECEIPT_PRINTER } from './test-cloud.ts'

const HOUR = 3600_000
const RETENTION_HOURS = 24
/** Housekeeping's clock when every document of a test is past its retention. */
const later = () => Date.now() + (RETENTION_HOURS + 1) * HOUR

interface LogLine {
  level: number
  msg: string
  step?: string
  err?: { code?: string }
}

describe('housekeeping (real SQLite file and blob directory)', () => {
  let dir: ReturnType<typeof tempDir>
  let storage: Storage
  let blobs: BlobStore
  let intake: DocumentIntake
  let sql: Database.Database
  let logs: LogLine[]
  let logger: Logger
  let accountId: string
  let printerId: string
  let clientId: string
  const running: Housekeeping[] = []

  beforeEach(async () => {
    dir = tempDir()
    // A short busy timeout, so that a write against a held lock fails at once.
    storage = await openStorage({ dataDir: dir.path, busyTimeoutMs: 50 })
    blobs = createBlobStore(dir.path)
    intake = createDocumentIntake({
      storage,
      blobs,
      pdfInspector: { inspect: async () => ({ pages: 1 }) },
      maxDocumentBytes: 1024 * 1024,
      storageQuotaBytes: 1024 * 1024,
    })
    sql = new Database(path.join(dir.path, DATABASE_FILE))
    logs = []
    logger = pino({ level: 'info' }, { write: (line: string) => logs.push(JSON.parse(line) as LogLine) })
    accountId = (await storage.accounts.create('Shop')).account_id
    clientId = (await storage.apiClients.create(accountId, hashSecret('cs_x'), ALL_SCOPES)).client_id
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
    for (const h of running.splice(0)) await h.stop()
    sql.close()
    await storage.close()
    dir.remove()
  })

  const housekeeping = (now: () => number = later, intervalMs = 60_000) => {
    const h = new Housekeeping({
      storage,
      blobs,
      logger,
      intervalMs,
      documentRetentionHours: RETENTION_HOURS,
      now,
    })
    running.push(h)
    return h
  }
  const token = async (name: string, expiresAt: number) => {
    await storage.apiClients.storeToken(hashSecret(name), {
      account_id: accountId,
      client_id: clientId,
      scopes: ALL_SCOPES,
      expires_at: expiresAt,
    })
  }
  const tokenCount = () => sql.prepare('SELECT count(*) FROM access_tokens').pluck().get()
  /** A receipt above OFFER_CONTENT_MAX_BYTES, so that its bytes are a file of the blob store. */
  const receipt = (text: string, account = accountId) =>
    intake.ingest(
      account,
      Buffer.from(`\x1b@${text}\n${'-'.repeat(OFFER_CONTENT_MAX_BYTES)}\n\x1dVB\x00`, 'latin1'),
      {
        format: 'raw',
        rawLanguage: 'escpos',
      },
    )
  /** A small receipt, kept in its document's row (migration 24). */
  const smallReceipt = (text: string) =>
    intake.ingest(accountId, Buffer.from(`\x1b@${text}\n\x1dVB\x00`, 'latin1'), {
      format: 'raw',
      rawLanguage: 'escpos',
    })
  const jobOf = async (d: Document, status: PrintJobStatus, completedAt: string | null = null) => {
    const id = crypto.randomUUID()
    const created = await insertWithinCapacity(
      storage,
      accountId,
      {
        print_job_id: id,
        document_id: d.document_id,
        document_mime_type: d.document_mime_type,
        document_format: d.document_format,
        document_raw_language: d.document_raw_language,
        printer_id: printerId,
        status: 'pending',
        ...resolveOptions({}),
        created_at: new Date().toISOString(),
        reserved_at: null,
        started_at: null,
        completed_at: null,
        failure_reason: null,
        failure_detail: null,
        waiting_reason: null,
        origin: 'cloud',
        duplicate_of: null,
      },
      1000,
    )
    expect(created).toBe(true)
    sql
      .prepare('UPDATE print_jobs SET status = ?, completed_at = ? WHERE print_job_id = ?')
      .run(status, completedAt, id)
    return id
  }
  /** Whether the document's bytes are still kept (read through the store, as the agent API does). */
  const fileOf = async (d: Document) => {
    const kept = await blobs.open(d.sha256)
    kept?.stream.destroy()
    return kept !== undefined
  }

  it('purges expired access tokens and keeps live ones', async () => {
    await token('expired', Date.now() - 1000)
    await token('expires-now', Date.now())
    await token('live', Date.now() + HOUR)

    const pass = await housekeeping(() => Date.now()).runOnce()

    expect(pass).toEqual({
      access_tokens: 2,
      idempotency_keys: 0,
      console_sessions: 0,
      documents: 0,
      blobs: 0,
      webhook_deliveries: 0,
      failed: [],
    })
    expect(tokenCount()).toBe(1)
    expect(await storage.apiClients.findToken(hashSecret('live'), Date.now())).toMatchObject({
      client_id: clientId,
    })
  })

  it('purges console sessions past their expiry and keeps live ones', async () => {
    await storage.consoleSessions.set(hashSecret('ended'), null, '{}', Date.now() - 1000)
    await storage.consoleSessions.set(hashSecret('live'), null, '{}', Date.now() + HOUR)

    const pass = await housekeeping(() => Date.now()).runOnce()

    expect(pass).toMatchObject({ console_sessions: 1, failed: [] })
    expect(sql.prepare('SELECT count(*) FROM console_sessions').pluck().get()).toBe(1)
    expect(await storage.consoleSessions.get(hashSecret('live'), Date.now())).toBe('{}')
  })

  it('purges expired installation tokens too', async () => {
    const app = await storage.applications.create('App', false)
    const installation = await storage.applications.install(app.app_id, accountId, ['printers:read'])
    for (const [name, expiresAt] of [
      ['expired', Date.now() - 1000],
      ['live', Date.now() + HOUR],
    ] as const) {
      await storage.applications.storeToken(hashSecret(name), {
        installation_id: installation.installation_id,
        account_id: accountId,
        scopes: ['printers:read'],
        expires_at: expiresAt,
      })
    }

    const pass = await housekeeping(() => Date.now()).runOnce()

    expect(pass).toEqual({
      access_tokens: 1,
      idempotency_keys: 0,
      console_sessions: 0,
      documents: 0,
      blobs: 0,
      webhook_deliveries: 0,
      failed: [],
    })
    expect(sql.prepare('SELECT count(*) FROM installation_tokens').pluck().get()).toBe(1)
    expect(await storage.applications.findToken(hashSecret('live'), Date.now())).toMatchObject({
      installation_id: installation.installation_id,
    })
  })

  it('purges expired idempotency records and keeps live ones', async () => {
    const now = Date.now()
    const scope = (key: string) => ({ accountId, endpoint: 'POST /api/v1/print-jobs', key })
    // In this order: a claim purges what had expired at its own time.
    await storage.idempotency.begin(scope('new'), 'f', now, 60_000, HOUR)
    await storage.idempotency.begin(scope('old'), 'f', now - 2 * HOUR, 60_000, HOUR)

    const pass = await housekeeping(() => now).runOnce()

    expect(pass.idempotency_keys).toBe(1)
    expect(sql.prepare('SELECT key FROM idempotency_keys').pluck().all()).toEqual(['new'])
  })

  it('deletes the bytes of documents past retention that no unfinished job needs, never a shared blob still needed', async () => {
    const unused = await receipt('never printed')
    const queued = await receipt('waiting for its printer')
    await jobOf(queued, 'pending')
    const shared = await receipt('same bytes')
    const otherAccount = (await storage.accounts.create('Other')).account_id
    const sharedElsewhere = await receipt('same bytes', otherAccount)
    expect(sharedElsewhere.sha256).toBe(shared.sha256)
    await jobOf(sharedElsewhere, 'printing')
    const printed = await receipt('printed an hour ago')
    const printedJob = await jobOf(printed, 'printed', new Date(Date.now() - HOUR).toISOString())

    const pass = await housekeeping().runOnce()

    expect(pass).toEqual({
      access_tokens: 0,
      idempotency_keys: 0,
      console_sessions: 0,
      documents: 3,
      blobs: 2,
      webhook_deliveries: 0,
      failed: [],
    })
    expect([await fileOf(unused), await fileOf(printed)]).toEqual([false, false])
    expect(await storage.documents.findById(accountId, unused.document_id)).toBeUndefined()
    expect(await storage.documents.findById(accountId, printed.document_id)).toBeUndefined()
    // The purged shared document's row is marked, but its file stays for the document that still needs it.
    expect(await storage.documents.findById(accountId, shared.document_id)).toBeUndefined()
    expect([await fileOf(queued), await fileOf(shared)]).toEqual([true, true])
    expect(await storage.documents.findById(accountId, queued.document_id)).toEqual(queued)
    expect(await storage.documents.findById(otherAccount, sharedElsewhere.document_id)).toEqual(
      sharedElsewhere,
    )
    expect(await storage.documents.retainedBytes(accountId)).toBe(queued.size_bytes)
    expect(await storage.documents.retainedBytes(otherAccount)).toBe(sharedElsewhere.size_bytes)
    // The finished job is still readable and still names its document.
    expect(await storage.printJobs.findById(accountId, printedJob)).toMatchObject({
      document_id: printed.document_id,
      status: 'printed',
    })
    expect(sql.prepare('SELECT count(*) FROM documents').pluck().get()).toBe(5)
  })

  it('deletes a shared blob once the last document naming it is purged', async () => {
    const first = await receipt('same bytes')
    const second = await receipt('same bytes')
    const job = await jobOf(second, 'pending')
    expect(await housekeeping().runOnce()).toMatchObject({ documents: 1, blobs: 0 })
    expect(await fileOf(first)).toBe(true)

    sql
      .prepare("UPDATE print_jobs SET status = 'printed', completed_at = ? WHERE print_job_id = ?")
      .run(new Date().toISOString(), job)
    expect(await housekeeping().runOnce()).toMatchObject({ documents: 1, blobs: 1, failed: [] })
    expect(await fileOf(first)).toBe(false)
    expect(sql.prepare('SELECT count(*) FROM blob_deletions').pluck().get()).toBe(0)
  })

  it('keeps a small RAW document in its row, no file, and clears the bytes when it purges the document', async () => {
    const small = await smallReceipt('a small receipt')
    const contentOf = () =>
      sql.prepare('SELECT content FROM documents WHERE document_id = ?').pluck().get(small.document_id)
    expect(contentOf()).toEqual(Buffer.from('\x1b@a small receipt\n\x1dVB\x00', 'latin1'))
    expect((await storage.documents.findWithContent(accountId, small.document_id))?.content).toEqual(
      contentOf(),
    )
    const other = (await storage.accounts.create('Other')).account_id
    expect((await storage.documents.findWithContent(other, small.document_id))?.content).toBeUndefined()
    expect(await fileOf(small)).toBe(false)

    expect(await housekeeping().runOnce()).toMatchObject({ documents: 1, blobs: 0, failed: [] })
    expect(contentOf()).toBeNull()
    expect((await storage.documents.findWithContent(accountId, small.document_id))?.content).toBeUndefined()
    expect(await storage.documents.retainedBytes(accountId)).toBe(0)
  })

  it('a step that fails (database locked by another connection) is logged, and a later pass succeeds', async () => {
    await token('expired', Date.now() - 1000)
    const locker = new Database(path.join(dir.path, DATABASE_FILE))
    locker.exec('BEGIN IMMEDIATE')
    try {
      housekeeping(() => Date.now(), 10).start()
      // Two failed passes: the timer outlived the first failure.
      await expect
        .poll(() => logs.filter((l) => l.step === 'access_tokens').length, { timeout: 10_000 })
        .toBeGreaterThanOrEqual(2)
      expect(logs.find((l) => l.step === 'access_tokens')).toMatchObject({
        level: 50,
        msg: 'housekeeping step failed; the next pass retries it',
        err: { code: 'SQLITE_BUSY' },
      })
      expect(tokenCount()).toBe(1)
    } finally {
      locker.exec('COMMIT')
      locker.close()
    }
    await expect.poll(() => tokenCount(), { timeout: 10_000 }).toBe(0)
    expect(logs.some((l) => l.msg === 'housekeeping purged')).toBe(true)
  })
})
