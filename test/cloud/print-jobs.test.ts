import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { makePdf } from '../helpers/pdf.ts'
import { listen } from './api/api-helpers.ts'
import { ESCPOS_RECEIPT, startTestCloud, type TestAccount, type TestCloud } from './test-cloud.ts'

describe('print jobs', () => {
  let cloud: TestCloud
  let account: TestAccount
  let token: string

  beforeAll(async () => {
    cloud = await startTestCloud()
    account = await cloud.createAccount()
    token = await account.token()
  })
  afterAll(() => cloud.close())

  const post = (url: string, payload: unknown, headers: Record<string, string> = {}) =>
    cloud.app.inject({
      method: 'POST',
      url,
      payload: payload as object,
      headers: { authorization: `Bearer ${token}`, ...headers },
    })
  const get = (url: string) =>
    cloud.app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${token}` } })
  const receipt = (extra: Record<string, unknown> = {}) => ({
    document_base64: ESCPOS_RECEIPT.toString('base64'),
    document_format: 'raw',
    document_raw_language: 'escpos',
    printer_id: account.receiptPrinterId,
    ...extra,
  })

  it('creates a job from Base64 with every field present and the documented defaults', async () => {
    const res = await post('/api/v1/print-jobs/from-base64', receipt())
    expect(res.statusCode).toBe(201)
    const job = res.json()
    expect(job).toEqual({
      print_job_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      document_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      document_mime_type: 'application/vnd.epson-escpos',
      document_format: 'raw',
      document_raw_language: 'escpos',
      printer_id: account.receiptPrinterId,
      status: 'pending',
      copies: 1,
      intent: 'document',
      color_mode: 'default',
      duplex_mode: 'default',
      media_width_mm: null,
      media_height_mm: null,
      dpi: null,
      scale_mode: 'fit',
      orientation: 'default',
      offset_x_mm: 0,
      offset_y_mm: 0,
      margin_top_mm: 0,
      margin_right_mm: 0,
      margin_bottom_mm: 0,
      margin_left_mm: 0,
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      reserved_at: null,
      started_at: null,
      completed_at: null,
      failure_reason: null,
      failure_detail: null,
      waiting_reason: null,
      origin: 'cloud',
      duplicate_of: null,
    })
    const fetched = await get(`/api/v1/print-jobs/${job.print_job_id}`)
    expect(fetched.statusCode).toBe(200)
    expect(fetched.json()).toEqual(job)
  })

  it('gives jobs and documents ids of version 7, in the order they were created', async () => {
    // RFC 9562 §5.7: the version nibble 7 and the variant bits 10; the first 48 bits are the time.
    const v7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/
    const jobs = []
    for (let n = 0; n < 3; n += 1) {
      const res = await post('/api/v1/print-jobs/from-base64', receipt())
      expect(res.statusCode).toBe(201)
      jobs.push(res.json())
      await new Promise((resolve) => setTimeout(resolve, 2))
    }
    for (const ids of [jobs.map((job) => job.print_job_id), jobs.map((job) => job.document_id)]) {
      for (const id of ids) expect(id).toMatch(v7)
      expect([...ids].sort()).toEqual(ids)
    }
  })

  it('keeps the options it was given', async () => {
    const options = {
      copies: 3,
      intent: 'receipt',
      color_mode: 'monochrome',
      duplex_mode: 'simplex',
      media_width_mm: 80,
      media_height_mm: 120.5,
      dpi: 203,
      scale_mode: 'none',
      orientation: 'portrait',
      offset_x_mm: -1.5,
      offset_y_mm: 2,
      margin_top_mm: 1,
      margin_right_mm: 2,
      margin_bottom_mm: 3,
      margin_left_mm: 4,
    }
    const res = await post('/api/v1/print-jobs/from-base64', receipt(options))
    expect(res.statusCode).toBe(201)
    expect(res.json()).toMatchObject(options)
  })

  it('prints an uploaded document by its id', async () => {
    const upload = await cloud.app.inject({
      method: 'POST',
      url: '/api/v1/documents',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'multipart/form-data; boundary=XYZ' },
      payload: Buffer.concat([
        Buffer.from('--XYZ\r\nContent-Disposition: form-data; name="file"; filename="invoice.pdf"\r\n'),
        Buffer.from('Content-Type: application/pdf\r\n\r\n'),
        makePdf(2),
        Buffer.from('\r\n--XYZ--\r\n'),
      ]),
    })
    expect(upload.statusCode).toBe(201)
    const document = upload.json()
    const res = await post('/api/v1/print-jobs', {
      document_id: document.document_id,
      printer_id: account.labelPrinterId,
    })
    expect(res.statusCode).toBe(201)
    expect(res.json()).toMatchObject({
      document_id: document.document_id,
      document_mime_type: 'application/pdf',
      document_format: 'pdf',
      document_raw_language: null,
      printer_id: account.labelPrinterId,
      status: 'pending',
    })
  })

  it('answers 422 naming every field outside the Limits table', async () => {
    const res = await post(
      '/api/v1/print-jobs/from-base64',
      receipt({
        copies: 100,
        media_width_mm: 0,
        media_height_mm: 2001,
        dpi: 71,
        offset_x_mm: -2001,
        offset_y_mm: 2001,
        margin_top_mm: -1,
        margin_right_mm: 2001,
        margin_bottom_mm: -0.5,
        margin_left_mm: 2000.5,
        intent: 'poster',
        color_mode: 'sepia',
        duplex_mode: 'triplex',
        scale_mode: 'stretch',
        orientation: 'diagonal',
      }),
    )
    expect(res.statusCode).toBe(422)
    const body = res.json()
    expect(body.error).toBe('validation_failed')
    expect(body.error_code).toBe('validation_failed')
    const fields = new Set(body.details.fields.map((f: { field: string }) => f.field))
    expect([...fields].sort()).toEqual(
      [
        'copies',
        'media_width_mm',
        'media_height_mm',
        'dpi',
        'offset_x_mm',
        'offset_y_mm',
        'margin_top_mm',
        'margin_right_mm',
        'margin_bottom_mm',
        'margin_left_mm',
        'intent',
        'color_mode',
        'duplex_mode',
        'scale_mode',
        'orientation',
      ].sort(),
    )
  })

  it.each([
    [{ copies: 0 }, 'copies'],
    [{ copies: 1.5 }, 'copies'],
    [{ copies: '2' }, 'copies'],
    [{ dpi: 2401 }, 'dpi'],
    [{ dpi: 203.5 }, 'dpi'],
    [{ media_width_mm: 2000.01 }, 'media_width_mm'],
    [{ printer_id: 'not-a-uuid' }, 'printer_id'],
    [{ printer_id: undefined }, 'printer_id'],
    [{ surprise: true }, 'surprise'],
  ])('refuses %j with a 422 naming %s', async (change, field) => {
    const res = await post('/api/v1/print-jobs/from-base64', receipt(change))
    expect(res.statusCode).toBe(422)
    expect(res.json().details.fields.map((f: { field: string }) => f.field)).toEqual([field])
  })

  it('accepts the bounds themselves', async () => {
    const res = await post(
      '/api/v1/print-jobs/from-base64',
      receipt({ copies: 99, offset_x_mm: -2000, offset_y_mm: 2000, margin_top_mm: 0, margin_left_mm: 0 }),
    )
    expect(res.statusCode).toBe(201)
    const res1 = await post('/api/v1/print-jobs/from-base64', receipt({ copies: 1 }))
    expect(res1.statusCode).toBe(201)
  })

  it.each([
    ['data:application/pdf;base64,JVBERi0=', 'data_url_prefix'],
    ['not base64!', 'not_base64'],
    ['QUJD=', 'not_base64'],
  ])('answers 400 for the Base64 %j', async (text, reason) => {
    const res = await post('/api/v1/print-jobs/from-base64', receipt({ document_base64: text }))
    expect(res.statusCode).toBe(400)
    expect(res.json()).toMatchObject({
      error: 'invalid_request',
      error_code: 'invalid_base64',
      details: { reason },
    })
  })

  // Spec, Errors: 415 is "document type not supported". A body the endpoint cannot read as JSON is a malformed
  // request (400), so that a client never takes a missing header for a bad document.
  it('answers 400 unsupported_content_type, never 415, to a JSON body sent without Content-Type', async () => {
    const base = await listen(cloud.app)
    const body = Buffer.from(JSON.stringify(receipt()))
    const res = await fetch(`${base}/api/v1/print-jobs/from-base64`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}` },
      body,
    })
    expect(res.status).toBe(400)
    expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8')
    expect(await res.json()).toStrictEqual({
      error: 'invalid_request',
      error_code: 'unsupported_content_type',
      message: 'The request has a body but no Content-Type header.',
    })
  })

  it('answers 400 for a malformed JSON body and for a body that is not JSON', async () => {
    const malformed = await cloud.app.inject({
      method: 'POST',
      url: '/api/v1/print-jobs/from-base64',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      payload: '{"printer_id": ',
    })
    expect(malformed.statusCode).toBe(400)
    expect(malformed.json().error_code).toBe('invalid_request')
    const text = await cloud.app.inject({
      method: 'POST',
      url: '/api/v1/print-jobs/from-base64',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'text/plain' },
      payload: 'hello',
    })
    expect(text.statusCode).toBe(400)
    expect(text.json()).toStrictEqual({
      error: 'invalid_request',
      error_code: 'unsupported_content_type',
      message: 'This endpoint does not take that Content-Type.',
    })
  })

  it('answers 404 for an unknown job and 422 for an id that is not a uuid', async () => {
    const missing = await get(`/api/v1/print-jobs/${randomUUID()}`)
    expect(missing.statusCode).toBe(404)
    expect(missing.json()).toMatchObject({ error: 'not_found', error_code: 'print_job_not_found' })
    const invalid = await get('/api/v1/print-jobs/12345')
    expect(invalid.statusCode).toBe(422)
    expect(invalid.json().details.fields).toEqual([
      { field: 'printJobId', message: 'must match format "uuid"', location: 'params' },
    ])
  })

  // Options the printer cannot do are 422s naming the field: test/cloud/print-jobs/create-checks.test.ts.
  it('answers 409 with details.reason when the printer cannot take the raw language', async () => {
    const res = await post(
      '/api/v1/print-jobs/from-base64',
      receipt({
        document_raw_language: 'zpl',
        document_base64: Buffer.from('^XA^FO50,50^FDHi^FS^XZ').toString('base64'),
      }),
    )
    expect(res.statusCode).toBe(409)
    expect(res.json()).toMatchObject({
      error: 'conflict',
      error_code: 'unsupported_print_route',
      details: { reason: 'raw_language_not_supported', printer_id: account.receiptPrinterId },
    })
  })

  it('refuses RAW payloads that change the printer configuration', async () => {
    const res = await post(
      '/api/v1/print-jobs/from-base64',
      receipt({
        printer_id: account.labelPrinterId,
        document_raw_language: 'zpl',
        document_base64: Buffer.from('^XA^FO50,50^FDHi^FS^JUS^XZ').toString('base64'),
      }),
    )
    expect(res.statusCode).toBe(422)
    expect(res.json()).toMatchObject({
      error_code: 'raw_command_forbidden',
      details: { reason: expect.any(String) },
    })
  })

  it('lists jobs newest first and filters by status and printer', async () => {
    const first = (await post('/api/v1/print-jobs/from-base64', receipt())).json()
    const second = (await post('/api/v1/print-jobs/from-base64', receipt())).json()
    const page = (await get('/api/v1/print-jobs?limit=2')).json()
    expect(page.data.map((j: { print_job_id: string }) => j.print_job_id)).toEqual([
      second.print_job_id,
      first.print_job_id,
    ])
    expect(page.next_cursor).toBe(first.print_job_id)
    const byPrinter = (await get(`/api/v1/print-jobs?printer_id=${account.labelPrinterId}&limit=100`)).json()
    expect(byPrinter.data.length).toBeGreaterThan(0)
    expect(byPrinter.data.every((j: { printer_id: string }) => j.printer_id === account.labelPrinterId)).toBe(
      true,
    )
    const printed = (await get('/api/v1/print-jobs?status=printed')).json()
    expect(printed).toEqual({ data: [], next_cursor: null })
  })
})

describe('print job limits from configuration', () => {
  let cloud: TestCloud
  let account: TestAccount
  beforeAll(async () => {
    cloud = await startTestCloud({ env: { PRINT_QUEUE_CAPACITY: '2', MAX_DOCUMENT_BYTES: '2048' } })
    account = await cloud.createAccount()
  })
  afterAll(() => cloud.close())

  const create = async (bytes: Buffer, extra: Record<string, unknown> = {}) =>
    cloud.app.inject({
      method: 'POST',
      url: '/api/v1/print-jobs/from-base64',
      headers: { authorization: `Bearer ${await account.token()}` },
      payload: {
        document_base64: bytes.toString('base64'),
        document_format: 'raw',
        document_raw_language: 'escpos',
        printer_id: account.receiptPrinterId,
        ...extra,
      },
    })

  it('answers 413 for a document over MAX_DOCUMENT_BYTES', async () => {
    const res = await create(Buffer.alloc(3000, 0x41))
    expect(res.statusCode).toBe(413)
    expect(res.json()).toMatchObject({ error_code: 'document_too_large', details: { limit_bytes: 2048 } })
  })

  it('answers 415 for a type it does not print and 422 when the bytes contradict the format', async () => {
    const png = Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex')
    const unsupported = await create(png, { document_format: null, document_raw_language: null })
    expect(unsupported.statusCode).toBe(415)
    expect(unsupported.json().error_code).toBe('unsupported_document_type')
    const mismatch = await create(ESCPOS_RECEIPT, { document_format: 'pdf', document_raw_language: null })
    expect(mismatch.statusCode).toBe(422)
    expect(mismatch.json().error_code).toBe('document_format_mismatch')
  })

  it('answers 409 once the account has PRINT_QUEUE_CAPACITY unfinished jobs', async () => {
    expect((await create(ESCPOS_RECEIPT)).statusCode).toBe(201)
    expect((await create(ESCPOS_RECEIPT)).statusCode).toBe(201)
    const full = await create(ESCPOS_RECEIPT)
    expect(full.statusCode).toBe(409)
    expect(full.json()).toMatchObject({
      error: 'conflict',
      error_code: 'print_queue_full',
      details: { capacity: 2 },
    })
    const other = await cloud.createAccount('Other shop')
    const res = await cloud.app.inject({
      method: 'POST',
      url: '/api/v1/print-jobs/from-base64',
      headers: { authorization: `Bearer ${await other.token()}` },
      payload: {
        document_base64: ESCPOS_RECEIPT.toString('base64'),
        document_format: 'raw',
        document_raw_language: 'escpos',
        printer_id: other.receiptPrinterId,
      },
    })
    expect(res.statusCode).toBe(201)
  })
})
