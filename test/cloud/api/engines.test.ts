import { afterEach, describe, expect, it } from 'vitest'
import type { PrintJob } from '../../../protocol/print-job.ts'
import { storageEngine } from '../storage/engines.ts'
import { ESCPOS_RECEIPT, startTestCloud, type TestCloud } from '../test-cloud.ts'

/**
 * The API on each storage engine, where requests race: what a single-writer SQLite got for free (the queue
 * capacity, an Idempotency-Key, the storage quota) must hold on PostgreSQL with requests side by side.
 */
describe.each(['sqlite', 'postgres'] as const)('the print-job API on %s', (engine) => {
  const engineUnderTest = storageEngine(engine)
  const clouds: TestCloud[] = []
  afterEach(async () => {
    for (const cloud of clouds.splice(0)) await cloud.close()
  })
  const start = async (env: Record<string, string> = {}) => {
    const { databaseUrl, remove } = await engineUnderTest.freshSettings()
    remove()
    const cloud = await startTestCloud({ env: { ...env, ...(databaseUrl && { DATABASE_URL: databaseUrl }) } })
    clouds.push(cloud)
    expect(cloud.storage.engine).toBe(engine)
    return cloud
  }
  const receipt = (printerId: string, bytes = ESCPOS_RECEIPT) => ({
    document_base64: bytes.toString('base64'),
    document_format: 'raw',
    document_raw_language: 'escpos',
    printer_id: printerId,
  })

  it('create, read, list and cancel a job', async () => {
    const cloud = await start()
    const shop = await cloud.createAccount()
    const token = await shop.token()
    const created = await cloud.app.inject({
      method: 'POST',
      url: '/api/v1/print-jobs/from-base64',
      headers: { authorization: `Bearer ${token}` },
      payload: receipt(shop.receiptPrinterId),
    })
    expect(created.statusCode, created.body).toBe(201)
    const job = created.json() as PrintJob
    const read = await cloud.app.inject({
      url: `/api/v1/print-jobs/${job.print_job_id}`,
      headers: { authorization: `Bearer ${token}` },
    })
    expect(read.json()).toEqual(job)
    const list = await cloud.app.inject({
      url: '/api/v1/print-jobs',
      headers: { authorization: `Bearer ${token}` },
    })
    expect(list.json()).toEqual({ data: [job], next_cursor: null })
    const cancelled = await cloud.app.inject({
      method: 'POST',
      url: `/api/v1/print-jobs/${job.print_job_id}/cancel`,
      headers: { authorization: `Bearer ${token}` },
    })
    expect(cancelled.statusCode).toBe(200)
    expect(cancelled.json()).toMatchObject({ status: 'cancelled' })
  })

  it('never pass the queue capacity, even with creates side by side', async () => {
    const cloud = await start({ PRINT_QUEUE_CAPACITY: '3' })
    const shop = await cloud.createAccount()
    const token = await shop.token()
    const answers = await Promise.all(
      Array.from({ length: 8 }, () =>
        cloud.app.inject({
          method: 'POST',
          url: '/api/v1/print-jobs/from-base64',
          headers: { authorization: `Bearer ${token}` },
          payload: receipt(shop.receiptPrinterId),
        }),
      ),
    )
    expect(answers.map((a) => a.statusCode).sort()).toEqual([201, 201, 201, 409, 409, 409, 409, 409])
    const list = await cloud.app.inject({
      url: '/api/v1/print-jobs',
      headers: { authorization: `Bearer ${token}` },
    })
    expect((list.json() as { data: unknown[] }).data).toHaveLength(3)
  })

  it('create one job for one Idempotency-Key, however many requests carry it at once', async () => {
    const cloud = await start()
    const shop = await cloud.createAccount()
    const token = await shop.token()
    const answers = await Promise.all(
      Array.from({ length: 5 }, () =>
        cloud.app.inject({
          method: 'POST',
          url: '/api/v1/print-jobs/from-base64',
          headers: { authorization: `Bearer ${token}`, 'idempotency-key': 'order-1' },
          payload: receipt(shop.receiptPrinterId),
        }),
      ),
    )
    expect(answers.map((a) => a.statusCode)).toEqual([201, 201, 201, 201, 201])
    expect(new Set(answers.map((a) => (a.json() as PrintJob).print_job_id)).size).toBe(1)
    expect(answers.filter((a) => a.headers['idempotent-replayed'] === 'true')).toHaveLength(4)
  })

  it('never pass the storage quota, even with uploads side by side', async () => {
    // ESC @, a kilobyte of text, a cut (GS V 66 0): over the smallest quota allowed (1 KiB).
    const kilobyte = Buffer.concat([
      Buffer.from('\x1b@'),
      Buffer.alloc(1020, 'A'),
      Buffer.from('\n\x1dVB\x00'),
    ])
    const size = kilobyte.length
    const cloud = await start({ ACCOUNT_STORAGE_QUOTA_BYTES: String(size * 2) })
    const shop = await cloud.createAccount()
    const token = await shop.token()
    const answers = await Promise.all(
      Array.from({ length: 6 }, () =>
        cloud.app.inject({
          method: 'POST',
          url: '/api/v1/print-jobs/from-base64',
          headers: { authorization: `Bearer ${token}` },
          payload: receipt(shop.receiptPrinterId, kilobyte),
        }),
      ),
    )
    expect(answers.filter((a) => a.statusCode === 201)).toHaveLength(2)
    expect(answers.filter((a) => a.statusCode === 413)).toHaveLength(4)
    expect(await cloud.storage.documents.retainedBytes(shop.accountId)).toBe(size * 2)
  })

  it('refuse a NUL in a document_filename with a 422 naming it, and drop one from an uploaded file name', async () => {
    // PostgreSQL's text cannot hold a NUL; a name given in JSON is the client's mistake, a name from a
    // Content-Disposition is only a label (RFC 6266 §4.3) and loses its control characters as a fetched one does.
    const cloud = await start()
    const shop = await cloud.createAccount()
    const token = await shop.token()
    const refused = await cloud.app.inject({
      method: 'POST',
      url: '/api/v1/print-jobs/from-base64',
      headers: { authorization: `Bearer ${token}` },
      payload: { ...receipt(shop.receiptPrinterId), document_filename: 'receipt\u0000.bin' },
    })
    expect(refused.statusCode, refused.body).toBe(422)
    expect(refused.json()).toMatchObject({ error_code: 'validation_failed' })
    expect(JSON.stringify(refused.json().details)).toContain('document_filename')
    const boundary = 'nul-in-a-name'
    const uploaded = await cloud.app.inject({
      method: 'POST',
      url: '/api/v1/documents',
      headers: {
        authorization: `Bearer ${token}`,
        'content-type': `multipart/form-data; boundary=${boundary}`,
      },
      payload: Buffer.concat([
        Buffer.from(
          `--${boundary}\r\nContent-Disposition: form-data; name="document_format"\r\n\r\nraw\r\n` +
            `--${boundary}\r\nContent-Disposition: form-data; name="document_raw_language"\r\n\r\nescpos\r\n` +
            `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename*=utf-8''re%00ceipt%01.bin\r\n` +
            'Content-Type: application/octet-stream\r\n\r\n',
        ),
        ESCPOS_RECEIPT,
        Buffer.from(`\r\n--${boundary}--\r\n`),
      ]),
    })
    expect(uploaded.statusCode, uploaded.body).toBe(201)
    expect(uploaded.json()).toMatchObject({ filename: 'receipt.bin' })
  })

  it('answer a token request whose client_id holds a NUL as an unknown client', async () => {
    const cloud = await start()
    for (const credentials of [
      { payload: 'grant_type=client_credentials&client_id=a%00b&client_secret=x', authorization: undefined },
      {
        payload: 'grant_type=client_credentials',
        authorization: `Basic ${Buffer.from('a\u0000b:x').toString('base64')}`,
      },
    ]) {
      const res = await cloud.app.inject({
        method: 'POST',
        url: '/oauth/token',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          ...(credentials.authorization && { authorization: credentials.authorization }),
        },
        payload: credentials.payload,
      })
      expect(res.statusCode, res.body).toBe(401)
      expect(res.json()).toMatchObject({ error: 'invalid_client', error_code: 'invalid_client' })
    }
  })
})
