import type { LanJob } from '../../protocol/hub-messages.ts'
import { resolvedOptionsOf } from '../../protocol/print-job.ts'
import { inTransaction, type Sql } from './engine.ts'

/** What became of a hub's report of a LAN job: recorded now, already known, or refused (not that hub's printer). */
export type LanJobRecorded = 'recorded' | 'known' | 'refused'

/**
 * Records a job a hub took on its LAN API (docs/lan-printing.md), once, with the hub's id for it: the job
 * `reserved` (its hub holds it), offered and reserved when it was taken, `origin` 'lan', on a printer that
 * must be the reporting hub's; and its document as a row whose bytes are on the hub only (purged from the
 * cloud's point of view: nothing to download, nothing counted against the account's storage). A job already
 * known changes nothing here: its status moves by the lifecycle's rules, forward only.
 */
export function lanJobRecorder(sql: Sql): (agentId: string, job: LanJob) => Promise<LanJobRecorded> {
  return (agentId, job) =>
    inTransaction(sql, async ({ db }) => {
      const known = await db
        .selectFrom('print_jobs')
        .select('print_job_id')
        .where('print_job_id', '=', job.print_job_id)
        .executeTakeFirst()
      if (known) return 'known'
      const printer = await db
        .selectFrom('printers')
        .select('account_id')
        .where('printer_id', '=', job.printer_id)
        .where('agent_id', '=', agentId)
        .executeTakeFirst()
      if (!printer) return 'refused'
      const { document } = job
      await db
        .insertInto('documents')
        .values({
          document_id: document.document_id,
          account_id: printer.account_id,
          mime_type: document.mime_type,
          format: document.format,
          raw_language: document.raw_language,
          size_bytes: document.size_bytes,
          sha256: document.sha256,
          filename: document.filename,
          created_at: job.created_at,
          purged_at: null,
        })
        .onConflict((oc) => oc.column('document_id').doNothing())
        .execute()
      // A document id another account holds (a hub cannot name another account's document).
      const owner = await db
        .selectFrom('documents')
        .select('account_id')
        .where('document_id', '=', document.document_id)
        .executeTakeFirstOrThrow()
      if (owner.account_id !== printer.account_id) return 'refused'
      await db
        .insertInto('print_jobs')
        .values({
          print_job_id: job.print_job_id,
          account_id: printer.account_id,
          document_id: document.document_id,
          printer_id: job.printer_id,
          status: 'reserved',
          options: JSON.stringify(resolvedOptionsOf(job.options)),
          created_at: job.created_at,
          reserved_at: job.created_at,
          started_at: null,
          completed_at: null,
          failure_reason: null,
          offered_at: job.created_at,
          origin: 'lan',
          idempotency: job.idempotency ? JSON.stringify(job.idempotency) : null,
        })
        .execute()
      // Inserted retained, since a job's insert needs its document retained (migration 6's trigger).
      await db
        .updateTable('documents')
        .set({ purged_at: job.created_at })
        .where('document_id', '=', document.document_id)
        .where('account_id', '=', printer.account_id)
        .execute()
      return 'recorded'
    })
}
