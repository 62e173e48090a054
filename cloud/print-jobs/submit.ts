import { ApiError } from '../../print-api/api-error.ts'
import { checkPrintRoute, resolveOptions } from '../../print-api/route-check.ts'
import { type Reference, unknownReferences } from '../../print-api/unknown-references.ts'
import type { Document } from '../../protocol/document.ts'
import type { PrintJob, PrintOptions } from '../../protocol/print-job.ts'
import { type DocumentWithJob, quotaRefusal } from '../documents/intake.ts'
import { isDocumentPurgedError } from '../storage/documents.ts'
import type { IdempotencyScope } from '../storage/idempotency.ts'
import type { JobPrinter } from '../storage/printers.ts'
import type { Storage } from '../storage/storage.ts'
import { timeOrderedUuid } from '../uuid.ts'
import type { NewJobListener } from './job-events.ts'
import { JOB_ENTRY, type JobEntered, JobLifecycle, type JobLog, type NewPrintJob } from './lifecycle.ts'

/** Creates print jobs: route check, queue capacity, then the pending job (docs/architecture.md: a job, end to end). */
export interface PrintJobSubmitter {
  /** The account's printer, or a 422 naming printer_id (another account's printer is not disclosed). */
  printerFor(accountId: string, printerId: string): Promise<JobPrinter>
  documentFor(accountId: string, documentId: string): Promise<Document>
  /**
   * Both references of POST /api/v1/print-jobs; one 422 naming every id that names nothing. `content`: the
   * document's bytes when its row keeps them (a small RAW document), for the job's offer.
   */
  referencesFor(
    accountId: string,
    printerId: string,
    documentId: string,
  ): Promise<{ printer: JobPrinter; document: Document; content: Buffer | undefined }>
  /**
   * Inserts the job as it enters the lifecycle (offered, if its printer is online and `listener` offers new
   * jobs), logs it with `log` (the request's; tests may omit it), then tells `listener`. Under an
   * Idempotency-Key, the key's answer (201 and the job) is written in the same transaction as the job: a cloud
   * that dies before answering leaves a key that replays this job, never one that lets the retry create a
   * second.
   */
  submit(
    accountId: string,
    printer: JobPrinter,
    document: Document,
    options: PrintOptions,
    log?: JobLog,
    idempotency?: IdempotencyScope | null,
    /** The request's fingerprint under that key, offered to the hub with the key (docs/lan-printing.md). */
    fingerprint?: string | null,
    /** The document's bytes, when the request carried them: a small document goes with the offer. */
    content?: Buffer,
    /** The document is new and not stored yet: stored with the job, in its transaction (intake's ingestForJob). */
    storeWithJob?: DocumentWithJob,
  ): Promise<PrintJob>
}

export function createPrintJobSubmitter(
  storage: Storage,
  queueCapacity: number,
  listener: NewJobListener,
): PrintJobSubmitter {
  const lifecycle = new JobLifecycle(storage.printJobs)
  return {
    async printerFor(accountId, printerId) {
      return (
        (await storage.printers.findForJob(accountId, printerId)) ??
        throwError(unknownReferences('printer_id'))
      )
    },
    async documentFor(accountId, documentId) {
      return (
        (await storage.documents.findById(accountId, documentId)) ??
        throwError(unknownReferences('document_id'))
      )
    },
    async referencesFor(accountId, printerId, documentId) {
      const [printer, found] = await Promise.all([
        storage.printers.findForJob(accountId, printerId),
        storage.documents.findWithContent(accountId, documentId),
      ])
      const document = found?.document
      if (printer && document) return { printer, document, content: found.content }
      const unknown: Reference[] = []
      if (!printer) unknown.push('printer_id')
      if (!document) unknown.push('document_id')
      throw unknownReferences(...unknown)
    },
    async submit(
      accountId,
      printer,
      document,
      requested,
      log,
      idempotency,
      fingerprint,
      content,
      storeWithJob,
    ) {
      const options = resolveOptions(requested)
      checkPrintRoute(printer, document, options)
      const job: NewPrintJob = {
        print_job_id: timeOrderedUuid(),
        document_id: document.document_id,
        document_mime_type: document.document_mime_type,
        document_format: document.document_format,
        document_raw_language: document.document_raw_language,
        printer_id: printer.printer_id,
        status: JOB_ENTRY.to,
        ...options,
        created_at: new Date().toISOString(),
        reserved_at: null,
        started_at: null,
        completed_at: null,
        failure_reason: null,
        failure_detail: null,
        waiting_reason: null,
        origin: 'cloud',
        duplicate_of: null,
      }
      let entered: JobEntered
      try {
        entered = await lifecycle.create(
          accountId,
          job,
          {
            capacity: queueCapacity,
            ...(idempotency && {
              answer: {
                scope: idempotency,
                statusCode: 201,
                body: JSON.stringify(job),
                ...(fingerprint && { fingerprint }),
              },
            }),
            // Offered as it is stored when its printer is online; otherwise when its hub connects.
            offered: listener.offersNewJobs && printer.online,
            ...(storeWithJob && { document: { document, ...storeWithJob } }),
          },
          log,
        )
      } catch (error) {
        // Purged by housekeeping since it was looked up: answered as a document that is not there.
        if (isDocumentPurgedError(error)) throw unknownReferences('document_id')
        throw error
      }
      // Only a document stored with its job (storeWithJob) is refused here.
      if (entered.created === 'quota_exceeded')
        throw await quotaRefusal(storage, accountId, storeWithJob?.quotaBytes ?? 0, document.size_bytes)
      if (entered.created === 'queue_full') {
        throw new ApiError(
          'print_queue_full',
          `The account already has ${queueCapacity} unfinished print jobs.`,
          {
            capacity: queueCapacity,
          },
        )
      }
      await listener.jobCreated(
        {
          ...job,
          account_id: accountId,
          agent_id: printer.agent_id,
          printer_key: printer.printer_key,
          sha256: document.sha256,
          size_bytes: document.size_bytes,
          offered_at: entered.offered_at,
          cancel_requested_at: null,
          cancel_reason: null,
          idempotency:
            idempotency && fingerprint
              ? { endpoint: idempotency.endpoint, key: idempotency.key, fingerprint }
              : null,
        },
        content,
      )
      return job
    },
  }
}

function throwError(error: Error): never {
  throw error
}
