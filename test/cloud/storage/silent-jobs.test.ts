import { randomUUID } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { resolveOptions } from '../../../print-api/route-check.ts'
import type { PrintJob } from '../../../protocol/print-job.ts'
import { ENGINES } from './engines.ts'
import { insertWithinCapacity, shopWithPrintersOnHubs } from './stored-jobs.ts'

const MINUTE = 60_000

/**
 * printJobs.silentAtOnlineHubs (cloud/dispatch/silent-jobs.ts asks hubs about these): unfinished jobs offered
 * to an online hub of which nothing was heard since the cutoff, the same on both engines.
 */
describe.each(ENGINES)('silent jobs on %s', (engine) => {
  const shop = shopWithPrintersOnHubs(engine)

  const ago = (ms: number) => new Date(Date.now() - ms).toISOString()
  /** Jobs are created a second apart, in the order of the calls: "oldest first" has no ties to break. */
  let created = 0

  /** A job on the online hub's printer (or the offline one's), with the given columns set. */
  const job = async (
    columns: Partial<
      Record<
        'status' | 'offered_at' | 'reserved_at' | 'started_at' | 'completed_at' | 'cancel_requested_at',
        string
      >
    >,
    hub: 'online' | 'offline' = 'online',
  ): Promise<string> => {
    const createdAt = ago(60 * MINUTE - ++created * 1000)
    const document = {
      document_id: randomUUID(),
      document_mime_type: 'application/vnd.escpos',
      document_format: 'raw' as const,
      document_raw_language: 'escpos' as const,
      size_bytes: 10,
      sha256: randomUUID().replaceAll('-', ''),
      filename: null,
      created_at: createdAt,
    }
    expect(await shop.t.storage.documents.insertWithinQuota(shop.accountId, document, 1e9)).toBe(true)
    const printJob: PrintJob = {
      print_job_id: randomUUID(),
      document_id: document.document_id,
      document_mime_type: document.document_mime_type,
      document_format: document.document_format,
      document_raw_language: document.document_raw_language,
      printer_id: shop.printerOf[hub],
      status: 'pending',
      ...resolveOptions({}),
      created_at: createdAt,
      reserved_at: null,
      started_at: null,
      completed_at: null,
      failure_reason: null,
      failure_detail: null,
      waiting_reason: null,
      origin: 'cloud',
      duplicate_of: null,
    }
    expect(await insertWithinCapacity(shop.t.storage, shop.accountId, printJob, 1000)).toBe(true)
    if (Object.keys(columns).length > 0)
      await shop.t.db
        .updateTable('print_jobs')
        .set(columns as never)
        .where('print_job_id', '=', printJob.print_job_id)
        .execute()
    return printJob.print_job_id
  }

  it('lists unfinished offered jobs of online hubs with nothing heard since the cutoff, oldest first', async () => {
    const long = ago(10 * MINUTE)
    const recent = ago(10_000)
    const silent = [
      await job({ offered_at: long }),
      await job({ status: 'reserved', offered_at: long, reserved_at: long }),
      await job({ status: 'printing', offered_at: long, reserved_at: long, started_at: long }),
      await job({ status: 'reserved', offered_at: long, reserved_at: long, cancel_requested_at: long }),
    ]
    // Heard of lately, never offered, finished, or on an offline hub: not silent.
    await job({ offered_at: recent })
    await job({ status: 'reserved', offered_at: long, reserved_at: recent })
    await job({ status: 'printing', offered_at: long, reserved_at: long, started_at: recent })
    await job({ status: 'reserved', offered_at: long, reserved_at: long, cancel_requested_at: recent })
    await job({})
    await job({
      status: 'printed',
      offered_at: long,
      reserved_at: long,
      started_at: long,
      completed_at: long,
    })
    await job({ offered_at: long }, 'offline')

    const found = await shop.t.storage.printJobs.silentAtOnlineHubs(ago(MINUTE), 100)
    expect(found.map((each) => each.print_job_id)).toEqual(silent)
    expect(found[2]).toMatchObject({ status: 'printing', agent_id: expect.any(String) })
    expect(await shop.t.storage.printJobs.silentAtOnlineHubs(ago(MINUTE), 2)).toHaveLength(2)
  })
})
