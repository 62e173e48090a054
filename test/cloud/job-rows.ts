import { randomUUID } from 'node:crypto'
import { resolveOptions } from '../../cloud/print-jobs/submit.ts'
import type { Storage } from '../../cloud/storage/storage.ts'
import type { PrintJobStatus } from '../../protocol/enums.ts'
import type { PrintJob } from '../../protocol/print-job.ts'

/**
 * A job of the account on the printer, stored straight through storage with the status and creation time given
 * (its document too): for pages and queries that read jobs of a period.
 */
export async function insertJobRow(
  storage: Pick<Storage, 'documents' | 'printJobs'>,
  accountId: string,
  printerId: string,
  status: PrintJobStatus,
  createdAt: string,
): Promise<PrintJob> {
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
  if (!(await storage.documents.insertWithinQuota(accountId, document, 1e9)))
    throw new Error('insertJobRow: over the storage quota')
  const job: PrintJob = {
    print_job_id: randomUUID(),
    document_id: document.document_id,
    document_mime_type: document.document_mime_type,
    document_format: 'raw',
    document_raw_language: 'escpos',
    printer_id: printerId,
    status,
    ...resolveOptions({}),
    created_at: createdAt,
    reserved_at: null,
    started_at: null,
    completed_at: null,
    failure_reason: null,
    failure_detail: null,
    waiting_reason: null,
  }
  if (!(await storage.printJobs.insertWithinCapacity(accountId, job, 100_000)))
    throw new Error('insertJobRow: the queue is full')
  return job
}
