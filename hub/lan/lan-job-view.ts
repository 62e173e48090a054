import { RAW_MIME_TYPES } from '../../print-api/documents/sniff.ts'
import type { PrintJobStatus } from '../../protocol/enums.ts'
import { type PrintJob, resolvedOptionsOf } from '../../protocol/print-job.ts'
import type { SpooledJob, SpoolState } from '../jobs/spool.ts'

/** A job in the spool is `reserved` until it starts: the hub holds it (docs/job-lifecycle.md). */
const STATUS: Record<SpoolState, PrintJobStatus> = {
  queued: 'reserved',
  printing: 'printing',
  printed: 'printed',
  failed: 'failed',
  cancelled: 'cancelled',
}

/**
 * A job of the spool as the LAN API shows it: the body of GET /api/v1/print-jobs/{id}, as the cloud's
 * (protocol/print-job.ts). A LAN job shows its options as asked; a job the cloud offered shows what its offer
 * carried (for RAW, the rendering options' defaults) and its document's MIME type from its format.
 */
export function lanJobView(job: SpooledJob): PrintJob {
  const { offer } = job
  const options = job.lan?.options ?? offer.options
  const { document } = offer
  const mimeType =
    job.lan?.mime_type ??
    (document.format === 'pdf' || document.raw_language === null
      ? 'application/pdf'
      : RAW_MIME_TYPES[document.raw_language])
  return {
    print_job_id: job.print_job_id,
    document_id: document.document_id,
    document_mime_type: mimeType,
    document_format: document.format,
    document_raw_language: document.raw_language,
    printer_id: offer.printer_id,
    status: STATUS[job.state],
    ...resolvedOptionsOf(options),
    created_at: offer.created_at,
    reserved_at: job.taken_at,
    started_at: job.started_at,
    completed_at: job.completed_at,
    failure_reason: job.state === 'failed' ? (job.failure_reason ?? 'printer_error') : null,
    failure_detail: job.state === 'failed' ? job.failure_detail : null,
    waiting_reason: null,
    origin: job.origin,
    duplicate_of: job.duplicate_of,
  }
}
