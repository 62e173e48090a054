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
