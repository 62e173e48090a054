import { afterEach, describe, expect, it } from 'vitest'
import type { PrintJob } from '../../protocol/print-job.ts'
import { ESCPOS_RECEIPT, startTestCloud, type TestCloud } from './test-cloud.ts'

/**
 * Issue 6, point 10 (found by the soak): a cloud that dies after writing a job but before answering must not
 * let the client's retry create a second job. Here the first cloud never answers (its notification of the new
 * job never returns, as if the process had died at that moment); the retry goes to a second cloud on the same
 * database, as to the restarted process.
 */
describe('Idempotency-Key across a cloud that died mid-request', () => {
  const clouds: TestCloud[] = []
  afterEach(async () => {
    for (const cloud of clouds.splice(0).reverse()) await cloud.close()
  })

  it('replays the job written before the crash instead of creating a second one', async () => {
    const dying = await startTestCloud({
      jobEvents: {
        offersNewJobs: false,
        jobCreated: () => new Promise<void>(() => {}),
        cancelRequested: async () => {},
      },
    })
    clouds.push(dying)
    const account = await dying.createAccount()
    const request = {
      method: 'POST' as const,
      url: '/api/v1/print-jobs/from-base64',
      headers: { authorization: `Bearer ${await account.token()}`, 'idempotency-key': 'order-77' },
      payload: {
        printer_id: account.receiptPrinterId,
        document_base64: ESCPOS_RECEIPT.toString('base64'),
        document_format: 'raw',
        document_raw_language: 'escpos',
      },
    }
    void dying.app.inject(request)
    const jobs = async () =>
      (await dying.storage.printJobs.list(account.accountId, 100, undefined, {}))?.data ?? []
    await expect.poll(async () => (await jobs()).length).toBe(1)

    const restarted = await startTestCloud({ dataDir: dying.dataDir })
    clouds.push(restarted)
    const retry = await restarted.app.inject(request)
    expect(retry.statusCode).toBe(201)
    expect(retry.headers['idempotent-replayed']).toBe('true')
    const replayed = retry.json() as PrintJob
    expect(replayed).toMatchObject({ print_job_id: (await jobs())[0]!.print_job_id, status: 'pending' })
    expect(await jobs()).toHaveLength(1)
  })
})
