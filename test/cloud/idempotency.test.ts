import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openStorage } from '../../cloud/storage/storage.ts'
import type { PrintJob } from '../../protocol/print-job.ts'
import { tempDir } from '../helpers/temp-dir.ts'
import { ESCPOS_RECEIPT, startTestCloud, type TestAccount, type TestCloud } from './test-cloud.ts'

describe('Idempotency-Key over real HTTP', () => {
  let cloud: TestCloud
  let account: TestAccount
  let base: string

  beforeAll(async () => {
    cloud = await startTestCloud()
    account = await cloud.createAccount()
    base = await cloud.app.listen({ host: '127.0.0.1', port: 0 })
  })
  afterAll(() => cloud.close())

  const body = (extra: Record<string, unknown> = {}) => ({
    document_base64: ESCPOS_RECEIPT.toString('base64'),
    document_format: 'raw',
    document_raw_language: 'escpos',
    printer_id: account.receiptPrinterId,
    ...extra,
  })
  const create = async (
    key: string | null,
    payload: unknown,
    who: TestAccount = account,
    path = 'from-base64',
  ) =>
    fetch(`${base}/api/v1/print-jobs/${path}`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${await who.token()}`,
        'content-type': 'application/json',
        ...(key !== null && { 'idempotency-key': key }),
      },
      body: JSON.stringify(payload),
    })
  const jobOf = async (res: Response) => (await res.json()) as PrintJob
  const jobCount = async (who: TestAccount = account) =>
    (await cloud.storage.printJobs.list(who.accountId, 100, undefined, {}))?.data.length ?? 0

  it('answers a retry with the original status and body, and creates one job', async () => {
    const before = await jobCount()
    const first = await create('order-1001-receipt', body())
    const retry = await create('order-1001-receipt', body())
    expect(first.status).toBe(201)
    expect(retry.status).toBe(201)
    expect(retry.headers.get('idempotent-replayed')).toBe('true')
    expect(await retry.text()).toBe(await first.text())
    expect(await jobCount()).toBe(before + 1)
  })

  it('treats the same fields in another order as the same request', async () => {
    const { printer_id, ...rest } = body()
    const first = await create('order-1002', { printer_id, ...rest })
    const retry = await create('order-1002', { ...rest, printer_id })
    expect((await jobOf(retry)).print_job_id).toBe((await jobOf(first)).print_job_id)
  })

  it('answers 409 when the key is reused with a different request', async () => {
    expect((await create('order-1003', body())).status).toBe(201)
    const conflict = await create('order-1003', body({ copies: 2 }))
    expect(conflict.status).toBe(409)
    expect(await conflict.json()).toMatchObject({ error: 'conflict', error_code: 'idempotency_key_conflict' })
  })

  it('scopes keys to the endpoint and the account', async () => {
    const other = await cloud.createAccount('Other shop')
    const a = await create('shared-key', body())
    const b = await create('shared-key', body({ printer_id: other.receiptPrinterId }), other)
    expect(a.status).toBe(201)
    expect(b.status).toBe(201)
    expect((await jobOf(a)).print_job_id).not.toBe((await jobOf(b)).print_job_id)
    const upload = await cloud.app.inject({
      method: 'POST',
      url: '/api/v1/print-jobs',
      headers: { authorization: `Bearer ${await account.token()}`, 'idempotency-key': 'shared-key' },
      payload: { document_id: '00000000-0000-4000-8000-000000000000', printer_id: account.receiptPrinterId },
    })
    expect(upload.statusCode).toBe(422)
  })

  it('creates exactly one job for concurrent identical requests', async () => {
    const before = await jobCount()
    const answers = await Promise.all(Array.from({ length: 16 }, () => create('concurrent-key', body())))
    expect(answers.map((r) => r.status)).toEqual(Array(16).fill(201))
    const ids = new Set(await Promise.all(answers.map(async (r) => (await jobOf(r)).print_job_id)))
    expect(ids.size).toBe(1)
    expect(await jobCount()).toBe(before + 1)
  })

  it('refuses a key over 128 characters with 422 and takes one of 128', async () => {
    const long = await create('k'.repeat(129), body())
    expect(long.status).toBe(422)
    expect(((await long.json()) as { details: { fields: unknown[] } }).details.fields).toEqual([
      { field: 'idempotency-key', message: 'must NOT have more than 128 characters', location: 'headers' },
    ])
    expect((await create('k'.repeat(128), body())).status).toBe(201)
  })

  it('lets a corrected retry run after a failed attempt', async () => {
    const failed = await create('order-1004', body({ copies: 0 }))
    expect(failed.status).toBe(422)
    const corrected = await create('order-1004', body())
    expect(corrected.status).toBe(201)
  })
})

describe('idempotency records', () => {
  it('are kept for 24 hours and expire after', async () => {
    const dir = tempDir()
    const storage = await openStorage({ dataDir: dir.path })
    const scope = { accountId: 'a', endpoint: '/api/v1/print-jobs', key: 'k' }
    const hour = 3600_000
    const t0 = Date.parse('2026-11-22T00:00:00Z')
    expect(await storage.idempotency.begin(scope, 'f1', t0, 60_000, 24 * hour)).toEqual({
      outcome: 'started',
    })
    await storage.idempotency.complete(scope, 201, '{"ok":true}')
    expect(await storage.idempotency.begin(scope, 'f1', t0 + 24 * hour - 1, 60_000, 24 * hour)).toEqual({
      outcome: 'completed',
      statusCode: 201,
      body: '{"ok":true}',
    })
    expect(await storage.idempotency.begin(scope, 'f2', t0 + 24 * hour - 1, 60_000, 24 * hour)).toEqual({
      outcome: 'conflict',
    })
    expect(await storage.idempotency.begin(scope, 'f2', t0 + 24 * hour, 60_000, 24 * hour)).toEqual({
      outcome: 'started',
    })
    await storage.close()
    dir.remove()
  })

  it('stay claimed while their holder renews the claim, and are taken over once it stops', async () => {
    const dir = tempDir()
    const storage = await openStorage({ dataDir: dir.path })
    const scope = { accountId: 'a', endpoint: 'e', key: 'renewed' }
    expect(await storage.idempotency.begin(scope, 'f', 1000, 500, 10_000_000)).toEqual({ outcome: 'started' })
    await storage.idempotency.renew(scope, 2000)
    expect(await storage.idempotency.begin(scope, 'f', 1600, 500, 10_000_000)).toEqual({
      outcome: 'in_progress',
    })
    expect(await storage.idempotency.begin(scope, 'f', 2000, 500, 10_000_000)).toEqual({ outcome: 'started' })
    await storage.close()
    dir.remove()
  })

  it('let another node take over a claim whose holder died', async () => {
    const dir = tempDir()
    const storage = await openStorage({ dataDir: dir.path })
    const scope = { accountId: 'a', endpoint: 'e', key: 'k' }
    expect(await storage.idempotency.begin(scope, 'f', 1000, 500, 10_000_000)).toEqual({ outcome: 'started' })
    expect(await storage.idempotency.begin(scope, 'f', 1200, 500, 10_000_000)).toEqual({
      outcome: 'in_progress',
    })
    expect(await storage.idempotency.begin(scope, 'f', 1500, 500, 10_000_000)).toEqual({ outcome: 'started' })
    await storage.close()
    dir.remove()
  })
})
