import type { JobOffer } from '../../../protocol/hub-messages.ts'
import { PRINT_OPTION_DEFAULTS } from '../../../protocol/print-job.ts'

export const SPOOL_PRINTER = 'socket://127.0.0.1:9100'

/** Offer number `n` of a RAW ESC/POS job, created `n` seconds into the day: ids and order follow `n`. */
export const offer = (n: number, printerKey = SPOOL_PRINTER): JobOffer => ({
  v: 1,
  print_job_id: `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`,
  printer_id: '11111111-1111-4111-8111-111111111111',
  printer_key: printerKey,
  document: {
    document_id: '22222222-2222-4222-8222-222222222222',
    url: 'http://127.0.0.1:1/agent-api/v1/documents/22222222-2222-4222-8222-222222222222',
    sha256: 'a'.repeat(64),
    size_bytes: 10,
    format: 'raw',
    raw_language: 'escpos',
  },
  options: PRINT_OPTION_DEFAULTS,
  created_at: new Date(Date.UTC(2026, 10, 22, 0, 0, n)).toISOString(),
  expires_at: new Date(Date.UTC(2026, 10, 23)).toISOString(),
})

/** The ESC/POS bytes of job `n`'s document: initialize (ESC @), a line naming the job, a full cut (GS V 0). */
export const documentOf = (n: number): Buffer =>
  Buffer.concat([Buffer.from([0x1b, 0x40]), Buffer.from(`job ${n}\n`), Buffer.from([0x1d, 0x56, 0x00])])

/** Offer `n` as a printer sees it live: a document of its own (documentOf) and a deadline far ahead. */
export const liveOffer = (n: number, printerKey = SPOOL_PRINTER): JobOffer => {
  const base = offer(n, printerKey)
  const bytes = documentOf(n)
  return {
    ...base,
    document: { ...base.document, sha256: String(n).padStart(64, '0'), size_bytes: bytes.length },
    expires_at: '2999-01-01T00:00:00.000Z',
  }
}
