import type { JobOffer } from '../../protocol/hub-messages.ts'
import { OFFER_CONTENT_MAX_BYTES, PROTOCOL_VERSION } from '../../protocol/hub-messages.ts'
import { PRINT_OPTION_DEFAULTS, RENDERING_OPTION_KEYS, resolvedOptionsOf } from '../../protocol/print-job.ts'
import type { DispatchableJob } from '../storage/print-jobs.ts'

/**
 * The offer a hub gets for a job: where to download the document, its checksum, the options, the deadline; and
 * the document itself when it is small and at hand (`content`: the bytes of the request that created the job,
 * or those its document's row keeps, `job.content`), which saves the hub a download before the first byte.
 * A RAW payload is printed as it is, so the options that only shape rendering are offered as their defaults
 * (docs/printing-api.md: options and RAW payloads); the job itself keeps what was asked.
 */
export function jobOffer(
  job: DispatchableJob,
  publicUrl: string,
  expirySeconds: number,
  content: Buffer | undefined = job.content ?? undefined,
): JobOffer {
  const options = resolvedOptionsOf(job)
  if (job.document_format === 'raw') {
    for (const key of RENDERING_OPTION_KEYS) Object.assign(options, { [key]: PRINT_OPTION_DEFAULTS[key] })
  }
  return {
    v: PROTOCOL_VERSION,
    print_job_id: job.print_job_id,
    printer_id: job.printer_id,
    printer_key: job.printer_key ?? '',
    document: {
      document_id: job.document_id,
      url: `${publicUrl}/agent-api/v1/documents/${job.document_id}`,
      sha256: job.sha256,
      size_bytes: job.size_bytes,
      format: job.document_format,
      raw_language: job.document_raw_language,
      ...(content &&
        content.length <= OFFER_CONTENT_MAX_BYTES && { content_base64: content.toString('base64') }),
    },
    options,
    created_at: job.created_at,
    expires_at: new Date(Date.parse(job.created_at) + expirySeconds * 1000).toISOString(),
    ...(job.idempotency && { idempotency: job.idempotency }),
  }
}
