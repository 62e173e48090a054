import { existsSync, readdirSync, statSync } from 'node:fs'
import path from 'node:path'
import Database from 'better-sqlite3'
import { pino } from 'pino'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { Housekeeping } from '../../../cloud/housekeeping/housekeeping.ts'
import { JobLifecycle } from '../../../cloud/print-jobs/lifecycle.ts'
import { createPrintJobSubmitter } from '../../../cloud/print-jobs/submit.ts'
import { createBlobStore } from '../../../cloud/storage/blob-store.ts'
import { DATABASE_FILE } from '../../../cloud/storage/storage.ts'
import { ApiError } from '../../../print-api/api-error.ts'
import type { Document } from '../../../protocol/document.ts'
import type { PrintJob } from '../../../protocol/print-job.ts'
import { bearer, expectInjectedError, field } from '../api/api-helpers.ts'
import { startTestCloud, type TestAccount, type TestCloud } from '../test-cloud.ts'

const QUOTA = 1024
/** An ESC/POS receipt of exactly `size` bytes: ESC @, text, partial cut. */
const receipt = (size: number, letter: string) =>
  Buffer.concat([
    Buffer.from([0x1b, 0x40]),
    Buffer.from(letter.repeat(size - 6), 'ascii'),
    Buffer.from([0x1d, 0x56, 0x42, 0x00]),
  ])

describe('account storage quota and document retention, through the HTTP API', () => {
  let cloud: TestCloud
  let account: TestAccount
  beforeEach(async () => {
    cloud = await startTestCloud({ env: { ACCOUNT_STORAGE_QUOTA_BYTES: String(QUOTA) } })
    account = await cloud.createAccount()
  })
  afterEach(() => cloud.close())

  const blobFiles = () => {
    const dir = path.join(cloud.dataDir, 'documents')
    if (!existsSync(dir)) return []
    return readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((f) =>
      statSync(path.join(dir, f)).isFile(),
    )
  }
  /** Documents whose bytes are kept: a file of the blob store, or (a small RAW one) its row (migration 24). */
  const keptDocuments = () => {
    const db = new Database(path.join(cloud.dataDir, DATABASE_FILE), { readonly: true })
    try {
      const inRows = db.prepare('SELECT count(*) AS n FROM documents WHERE content IS NOT NULL').get() as {
        n: number
      }
      return blobFiles().length + inRows.n
    } finally {
      db.close()
    }
  }
  const stagedFiles = () => {
    const dir = path.join(cloud.dataDir, 'tmp')
    return existsSync(dir) ? readdirSync(dir) : []
  }
  const fromBase64 = async (bytes: Buffer) =>
    cloud.app.inject({
      method: 'POST',
      url: '/api/v1/print-jobs/from-base64',
      headers: bearer(await account.token()),
      payload: {
        document_base64: bytes.toString('base64'),
        document_format: 'raw',
        document_raw_language: 'escpos',
        printer_id: account.receiptPrinterId,
      },
    })
  const upload = async (bytes: Buffer) => {
    const boundary = 'quota-boundary'
    const payload = Buffer.concat([
      Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="document_raw_language"\r\n\r\nescpos\r\n`,
      ),
      Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="r.bin"\r\n\r\n`),
      bytes,
      Buffer.from(`\r\n--${boundary}--\r\n`),
    ])
    return cloud.app.inject({
      method: 'POST',
      url: '/api/v1/documents',
      headers: {
        ...bearer(await account.token()),
        'content-type': `multipart/form-data; boundary=${boundary}`,
      },
      payload,
    })
  }
  const printDocument = async (documentId: string) =>
    cloud.app.inject({
      method: 'POST',
      url: '/api/v1/print-jobs',
      headers: bearer(await account.token()),
      payload: { document_id: documentId, printer_id: account.receiptPrinterId },
    })
  /** Housekeeping as the cloud runs it, on a clock past every document's retention. */
  const purgeEverythingUnneeded = () =>
    new Housekeeping({
      storage: cloud.storage,
      blobs: createBlobStore(cloud.dataDir),
      logger: pino({ level: 'silent' }),
      intervalMs: 60_000,
      documentRetentionHours: cloud.config.documentRetentionHours,
      now: () => Date.now() + (cloud.config.documentRetentionHours + 1) * 3600_000,
    }).runOnce()

  it('refuses a Base64 document beyond the quota with 413 before storing it', async () => {
    expect((await fromBase64(receipt(600, 'a'))).statusCode).toBe(201)

    const refused = await fromBase64(receipt(600, 'b'))

    expectInjectedError(refused, 'storage_quota_exceeded', {
      quota_bytes: QUOTA,
      used_bytes: 600,
      document_bytes: 600,
    })
    expect(refused.json().error).toBe('payload_too_large')
    expect(await cloud.storage.documents.retainedBytes(account.accountId)).toBe(600)
    expect(keptDocuments()).toBe(1)
    expect(stagedFiles()).toEqual([])
  })

  it('stores one of two Base64 documents asked at once that only fit one at a time', async () => {
    const answers = await Promise.all([fromBase64(receipt(600, 'a')), fromBase64(receipt(600, 'b'))])

    expect(answers.map((answer) => answer.statusCode).sort()).toEqual([201, 413])
    const refused = answers.find((answer) => answer.statusCode === 413)!
    expectInjectedError(refused, 'storage_quota_exceeded', {
      quota_bytes: QUOTA,
      used_bytes: 600,
      document_bytes: 600,
    })
    expect(await cloud.storage.documents.retainedBytes(account.accountId)).toBe(600)
    expect(keptDocuments()).toBe(1)
  })

  it('stores nothing of a Base64 job its printer cannot take', async () => {
    const res = await cloud.app.inject({
      method: 'POST',
      url: '/api/v1/print-jobs/from-base64',
      headers: bearer(await account.token()),
      payload: {
        document_base64: Buffer.from('^XA^FO50,50^FDHi^FS^XZ').toString('base64'),
        document_format: 'raw',
        document_raw_language: 'zpl',
        printer_id: account.receiptPrinterId,
      },
    })

    expect(res.statusCode).toBe(409)
    expect(res.json().error_code).toBe('unsupported_print_route')
    expect(await cloud.storage.documents.retainedBytes(account.accountId)).toBe(0)
    expect(keptDocuments()).toBe(0)
  })

  it('refuses an upload beyond the quota the same way; another account is not affected', async () => {
    expect((await upload(receipt(1000, 'a'))).statusCode).toBe(201)

    expectInjectedError(await upload(receipt(100, 'b')), 'storage_quota_exceeded', {
      quota_bytes: QUOTA,
      used_bytes: 1000,
      document_bytes: 100,
    })
    // Exactly up to the quota is allowed.
    expect((await upload(receipt(24, 'c'))).statusCode).toBe(201)
    const other = account
    account = await cloud.createAccount('Other shop')
    expect((await upload(receipt(1000, 'd'))).statusCode).toBe(201)
    expect(await cloud.storage.documents.retainedBytes(other.accountId)).toBe(QUOTA)
    expect(keptDocuments()).toBe(3)
  })

  it('purged documents free the quota; their finished jobs stay readable; a new job on one is a 422', async () => {
    const uploaded = await upload(receipt(1000, 'a'))
    const document = uploaded.json() as Document
    const created = await printDocument(document.document_id)
    expect(created.statusCode).toBe(201)
    const job = created.json() as PrintJob
    // The job is still pending: the document is needed and kept.
    expect(await purgeEverythingUnneeded()).toMatchObject({ documents: 0, blobs: 0 })
    expect((await upload(receipt(100, 'b'))).statusCode).toBe(413)

    const failed = await new JobLifecycle(cloud.storage.printJobs).apply(job.print_job_id, 'fail', {
      completed_at: new Date().toISOString(),
      failure_reason: 'printer_error',
    })
    expect(failed).toBe(true)
    // Small and RAW, it was kept in its row: no file to delete.
    expect(await purgeEverythingUnneeded()).toMatchObject({ documents: 1, blobs: 0, failed: [] })

    expect(keptDocuments()).toBe(0)
    const read = await cloud.app.inject({
      method: 'GET',
      url: `/api/v1/print-jobs/${job.print_job_id}`,
      headers: bearer(await account.token()),
    })
    expect(read.statusCode).toBe(200)
    expect(read.json()).toMatchObject({
      print_job_id: job.print_job_id,
      document_id: document.document_id,
      status: 'failed',
    })
    expectInjectedError(await printDocument(document.document_id), 'validation_failed', {
      fields: [field('document_id', 'body')],
    })
    expect((await upload(receipt(1000, 'a'))).statusCode).toBe(201)
  })

  it('a job create that found its document just before housekeeping purged it gets the 422', async () => {
    const document = (await upload(receipt(100, 'a'))).json() as Document
    const submitter = createPrintJobSubmitter(cloud.storage, 1000, {
      offersNewJobs: false,
      jobCreated: async () => {},
    })
    const printer = await submitter.printerFor(account.accountId, account.receiptPrinterId)
    const found = await submitter.documentFor(account.accountId, document.document_id)

    expect(await purgeEverythingUnneeded()).toMatchObject({ documents: 1 })

    const error = await submitter.submit(account.accountId, printer, found, {}).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(ApiError)
    expect(error).toMatchObject({
      status: 422,
      code: 'validation_failed',
      details: { fields: [field('document_id', 'body')] },
    })
    const jobs = await cloud.app.inject({
      method: 'GET',
      url: '/api/v1/print-jobs',
      headers: bearer(await account.token()),
    })
    expect(jobs.json().data).toEqual([])
  })
})
