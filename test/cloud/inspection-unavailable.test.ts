import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createPdfInspector } from '../../print-api/documents/pdf-inspection.ts'
import { makePdf } from '../helpers/pdf.ts'
import { startTestCloud, type TestAccount, type TestCloud } from './test-cloud.ts'

describe('when document inspection cannot run', () => {
  let cloud: TestCloud
  let account: TestAccount
  beforeAll(async () => {
    cloud = await startTestCloud({
      pdfInspector: createPdfInspector({
        timeoutMs: 5000,
        maxConcurrent: 1,
        maxQueued: 0,
        maxQueuedPerAccount: 0,
        gsPath: '/nonexistent/gs',
      }),
    })
    account = await cloud.createAccount()
  })
  afterAll(() => cloud.close())

  it('answers 503 with Retry-After, stores nothing, and leaves the Idempotency-Key free for the retry', async () => {
    const res = await cloud.app.inject({
      method: 'POST',
      url: '/api/v1/print-jobs/from-base64',
      headers: { authorization: `Bearer ${await account.token()}`, 'idempotency-key': 'invoice-77' },
      payload: { document_base64: makePdf(1).toString('base64'), printer_id: account.labelPrinterId },
    })
    expect(res.statusCode).toBe(503)
    expect(res.headers['retry-after']).toMatch(/^[1-9]\d*$/)
    expect(res.json()).toMatchObject({ error: 'service_unavailable', error_code: 'inspection_unavailable' })
    expect((await cloud.storage.printJobs.list(account.accountId, 10, undefined, {}))?.data).toEqual([])
    const retry = await cloud.storage.idempotency.begin(
      { accountId: account.accountId, endpoint: '/api/v1/print-jobs/from-base64', key: 'invoice-77' },
      'another-fingerprint',
      Date.now(),
      1000,
      3600_000,
    )
    expect(retry).toEqual({ outcome: 'started' })
  })
})
