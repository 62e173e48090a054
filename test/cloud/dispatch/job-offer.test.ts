import { describe, expect, it } from 'vitest'
import { jobOffer } from '../../../cloud/dispatch/job-offer.ts'
import type { DispatchableJob } from '../../../cloud/storage/print-jobs.ts'
import { OFFER_CONTENT_MAX_BYTES } from '../../../protocol/hub-messages.ts'
import { PRINT_OPTION_DEFAULTS, type ResolvedPrintOptions } from '../../../protocol/print-job.ts'

const ASKED: ResolvedPrintOptions = {
  copies: 2,
  intent: 'receipt',
  color_mode: 'monochrome',
  duplex_mode: 'simplex',
  media_width_mm: 80,
  media_height_mm: 120,
  dpi: 203,
  scale_mode: 'none',
  orientation: 'landscape',
  offset_x_mm: -1.5,
  offset_y_mm: 2,
  margin_top_mm: 1,
  margin_right_mm: 2,
  margin_bottom_mm: 3,
  margin_left_mm: 4,
}

function job(format: 'pdf' | 'raw'): DispatchableJob {
  return {
    print_job_id: '00000000-0000-4000-8000-000000000001',
    document_id: '00000000-0000-4000-8000-000000000002',
    document_mime_type: format === 'pdf' ? 'application/pdf' : 'application/vnd.epson-escpos',
    document_format: format,
    document_raw_language: format === 'pdf' ? null : 'escpos',
    printer_id: '00000000-0000-4000-8000-000000000003',
    status: 'pending',
    ...ASKED,
    created_at: '2026-11-24T09:00:00.000Z',
    reserved_at: null,
    started_at: null,
    completed_at: null,
    failure_reason: null,
    failure_detail: null,
    waiting_reason: null,
    origin: 'cloud',
    duplicate_of: null,
    account_id: '00000000-0000-4000-8000-000000000004',
    agent_id: '00000000-0000-4000-8000-000000000005',
    printer_key: 'receipt-1',
    sha256: 'a'.repeat(64),
    size_bytes: 10,
    offered_at: null,
    cancel_requested_at: null,
    cancel_reason: null,
    idempotency: null,
  }
}

describe('jobOffer', () => {
  it('offers the Idempotency-Key the job was created with, and none for a job created without one', () => {
    const key = { endpoint: '/api/v1/print-jobs/from-base64', key: 'order-1042', fingerprint: 'f'.repeat(64) }
    expect(jobOffer({ ...job('raw'), idempotency: key }, 'https://print.example', 60).idempotency).toEqual(
      key,
    )
    expect(jobOffer(job('raw'), 'https://print.example', 60)).not.toHaveProperty('idempotency')
  })

  it('carries a document of at most OFFER_CONTENT_MAX_BYTES given with it, and never a larger one', () => {
    const small = Buffer.alloc(OFFER_CONTENT_MAX_BYTES, 0x41)
    expect(jobOffer(job('raw'), 'https://print.example', 60, small).document.content_base64).toBe(
      small.toString('base64'),
    )
    const large = Buffer.alloc(OFFER_CONTENT_MAX_BYTES + 1, 0x41)
    expect(jobOffer(job('raw'), 'https://print.example', 60, large).document).not.toHaveProperty(
      'content_base64',
    )
    expect(jobOffer(job('raw'), 'https://print.example', 60).document).not.toHaveProperty('content_base64')
  })

  it("carries the bytes the document's row keeps when none are given with it", () => {
    const kept = Buffer.from('\x1b@kept\n', 'latin1')
    expect(
      jobOffer({ ...job('raw'), content: kept }, 'https://print.example', 60).document.content_base64,
    ).toBe(kept.toString('base64'))
    expect(
      jobOffer({ ...job('raw'), content: null }, 'https://print.example', 60).document,
    ).not.toHaveProperty('content_base64')
  })

  it('offers a PDF job with every option as asked', () => {
    expect(jobOffer(job('pdf'), 'https://print.example', 60).options).toEqual(ASKED)
  })

  it('offers a RAW job the defaults of the options that only shape rendering, and its own copies, colour and duplex', () => {
    expect(jobOffer(job('raw'), 'https://print.example', 60).options).toEqual({
      ...PRINT_OPTION_DEFAULTS,
      copies: 2,
      intent: 'receipt',
      color_mode: 'monochrome',
      duplex_mode: 'simplex',
    })
  })
})
