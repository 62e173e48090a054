import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { makePdf } from '../../helpers/pdf.ts'
import { ESCPOS_RECEIPT, startTestCloud, type TestAccount, type TestCloud } from '../test-cloud.ts'

/**
 * docs/printing-api.md, "Behaviour the spec leaves open" → order of checks: a malformed request (400) before fields and
 * references (422), before the route and the queue (409); options are checked against the printer's
 * capabilities as fields (422), and RAW payloads ignore the options that only shape rendering.
 */
describe('print-job creation: checks in the documented order', () => {
  let cloud: TestCloud
  let account: TestAccount
  let rawOnlyPrinterId: string
  const connected: string[] = []
  const pdfBase64 = makePdf(1).toString('base64')

  beforeAll(async () => {
    cloud = await startTestCloud({
      fetchSeams: {
        resolve: async () => ['93.184.215.14'],
        connect: (target) => {
          connected.push(target.address)
          throw Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' })
        },
      },
    })
    account = await cloud.createAccount()
    rawOnlyPrinterId = (
      await cloud.storage.printers.insert({
        account_id: account.accountId,
        agent_id: account.agentId,
        name: 'Old receipts',
        capabilities: {
          document_formats: ['raw'],
          raw_languages: ['escpos'],
          dpi: [180],
          media_width_mm: { min: 58, max: 58 },
          media_height_mm: null,
          color: false,
          duplex: false,
        },
        reported: true,
      })
    ).printer_id
  })
  afterAll(() => cloud.close())

  const post = async (url: string, payload: Record<string, unknown>) =>
    cloud.app.inject({
      method: 'POST',
      url,
      payload,
      headers: { authorization: `Bearer ${await account.token()}` },
    })
  const fromBase64 = (extra: Record<string, unknown>) =>
    post('/api/v1/print-jobs/from-base64', {
      document_base64: ESCPOS_RECEIPT.toString('base64'),
      document_format: 'raw',
      document_raw_language: 'escpos',
      printer_id: account.receiptPrinterId,
      ...extra,
    })
  const pdfJob = (extra: Record<string, unknown>) =>
    fromBase64({
      document_base64: pdfBase64,
      document_format: 'pdf',
      document_raw_language: null,
      ...extra,
    })
  const unknownPrinter = {
    error: 'validation_failed',
    error_code: 'validation_failed',
    message: 'Invalid printer_id.',
    details: {
      fields: [{ field: 'printer_id', message: 'does not name a printer of this account', location: 'body' }],
    },
  }

  describe('a malformed request is a 400 before any lookup', () => {
    it('answers 400 for bad Base64 aimed at an unknown printer', async () => {
      const res = await fromBase64({ document_base64: 'not base64!', printer_id: randomUUID() })
      expect(res.statusCode).toBe(400)
      expect(res.json()).toEqual({
        error: 'invalid_request',
        error_code: 'invalid_base64',
        message: 'document_base64 is not valid padded Base64 (RFC 4648 §4).',
        details: { reason: 'not_base64', field: 'document_base64' },
      })
    })

    it('answers 400 for a data: prefix even when other fields are out of bounds', async () => {
      const res = await fromBase64({
        document_base64: 'data:application/pdf;base64,JVBERi0=',
        printer_id: randomUUID(),
        copies: 100,
      })
      expect(res.statusCode).toBe(400)
      expect(res.json()).toEqual({
        error: 'invalid_request',
        error_code: 'invalid_base64',
        message: 'document_base64 must be plain Base64, without a data: URL prefix.',
        details: { reason: 'data_url_prefix', field: 'document_base64' },
      })
    })

    it('answers 400 for a malformed URL aimed at an unknown printer, fetching nothing', async () => {
      const res = await post('/api/v1/print-jobs/from-url', {
        document_url: 'https://[::1',
        printer_id: randomUUID(),
        copies: 0,
      })
      expect(res.statusCode).toBe(400)
      expect(res.json()).toEqual({
        error: 'invalid_request',
        error_code: 'invalid_url_request',
        message: 'The document URL is not a well-formed absolute URL.',
        details: { reason: 'malformed_url' },
      })
      expect(connected).toEqual([])
    })
  })

  describe('then fields and references are a 422', () => {
    it('answers 422 for an unknown printer before fetching the document', async () => {
      const res = await post('/api/v1/print-jobs/from-url', {
        document_url: 'https://docs.example.com/label.pdf',
        printer_id: randomUUID(),
      })
      expect(res.statusCode).toBe(422)
      expect(res.json()).toEqual(unknownPrinter)
      expect(connected).toEqual([])
    })

    it('answers 422 for an unknown printer on POST /api/v1/print-jobs', async () => {
      const document = (await fromBase64({})).json().document_id
      const res = await post('/api/v1/print-jobs', { document_id: document, printer_id: randomUUID() })
      expect(res.statusCode).toBe(422)
      expect(res.json()).toEqual(unknownPrinter)
    })

    it('names both an unknown printer and an unknown document on POST /api/v1/print-jobs', async () => {
      const res = await post('/api/v1/print-jobs', { document_id: randomUUID(), printer_id: randomUUID() })
      expect(res.statusCode).toBe(422)
      expect(res.json()).toEqual({
        error: 'validation_failed',
        error_code: 'validation_failed',
        message: 'Invalid printer_id, document_id.',
        details: {
          fields: [
            { field: 'printer_id', message: 'does not name a printer of this account', location: 'body' },
            { field: 'document_id', message: 'does not name a document of this account', location: 'body' },
          ],
        },
      })
    })

    it.each([
      [{ dpi: 300 }, 'dpi', 'is not a resolution the printer prints at (203)'],
      [
        { media_width_mm: 104 },
        'media_width_mm',
        'is outside the media widths the printer takes (58 to 80 mm)',
      ],
      [
        { media_width_mm: 40 },
        'media_width_mm',
        'is outside the media widths the printer takes (58 to 80 mm)',
      ],
      [{ color_mode: 'color' }, 'color_mode', 'the printer prints in monochrome only'],
      [{ duplex_mode: 'duplex_short_edge' }, 'duplex_mode', 'the printer prints on one side only'],
    ])(
      'answers 422 naming the field for a PDF with %j the printer cannot do',
      async (change, field, message) => {
        const res = await pdfJob(change)
        expect(res.statusCode).toBe(422)
        expect(res.json()).toEqual({
          error: 'validation_failed',
          error_code: 'validation_failed',
          message: `Invalid ${field}.`,
          details: { fields: [{ field, message, location: 'body' }] },
        })
      },
    )

    it('names every option the printer cannot do, on the label printer too', async () => {
      const res = await pdfJob({
        printer_id: account.labelPrinterId,
        dpi: 600,
        media_height_mm: 400,
        color_mode: 'color',
      })
      expect(res.statusCode).toBe(422)
      expect(res.json()).toEqual({
        error: 'validation_failed',
        error_code: 'validation_failed',
        message: 'Invalid color_mode, media_height_mm, dpi.',
        details: {
          fields: [
            { field: 'color_mode', message: 'the printer prints in monochrome only', location: 'body' },
            {
              field: 'media_height_mm',
              message: 'is outside the media lengths the printer takes (10 to 300 mm)',
              location: 'body',
            },
            {
              field: 'dpi',
              message: 'is not a resolution the printer prints at (203, 300)',
              location: 'body',
            },
          ],
        },
      })
    })

    it('checks the options on POST /api/v1/print-jobs as on the shortcuts', async () => {
      const document = (await pdfJob({})).json().document_id
      const res = await post('/api/v1/print-jobs', {
        document_id: document,
        printer_id: account.receiptPrinterId,
        duplex_mode: 'duplex_long_edge',
      })
      expect(res.statusCode).toBe(422)
      expect(res.json().details.fields).toEqual([
        { field: 'duplex_mode', message: 'the printer prints on one side only', location: 'body' },
      ])
    })

    it('lets `default` and null options pass on any printer', async () => {
      const res = await pdfJob({
        color_mode: 'default',
        duplex_mode: 'default',
        orientation: 'default',
        dpi: null,
        media_width_mm: null,
        media_height_mm: null,
      })
      expect(res.statusCode).toBe(201)
      const simplex = await pdfJob({ color_mode: 'monochrome', duplex_mode: 'simplex', dpi: 203 })
      expect(simplex.statusCode).toBe(201)
    })

    it('answers an option the printer cannot do (422) before a format it cannot take (409)', async () => {
      const res = await pdfJob({ printer_id: rawOnlyPrinterId, dpi: 203 })
      expect(res.statusCode).toBe(422)
      expect(res.json().details.fields).toEqual([
        { field: 'dpi', message: 'is not a resolution the printer prints at (180)', location: 'body' },
      ])
    })
  })

  describe('then the route is a 409 with details.reason', () => {
    it('answers 409 for a format the printer cannot take', async () => {
      const res = await pdfJob({ printer_id: rawOnlyPrinterId })
      expect(res.statusCode).toBe(409)
      expect(res.json()).toEqual({
        error: 'conflict',
        error_code: 'unsupported_print_route',
        message: 'The printer does not print pdf.',
        details: {
          reason: 'document_format_not_supported',
          printer_id: rawOnlyPrinterId,
          document_id: expect.any(String),
          supported_formats: ['raw'],
        },
      })
    })

    it('answers 409 for a raw language the printer does not speak', async () => {
      const res = await fromBase64({
        document_raw_language: 'zpl',
        document_base64: Buffer.from('^XA^FO50,50^FDHi^FS^XZ').toString('base64'),
      })
      expect(res.statusCode).toBe(409)
      expect(res.json()).toEqual({
        error: 'conflict',
        error_code: 'unsupported_print_route',
        message: 'The printer does not speak zpl.',
        details: {
          reason: 'raw_language_not_supported',
          printer_id: account.receiptPrinterId,
          document_id: expect.any(String),
          supported_raw_languages: ['escpos'],
        },
      })
    })
  })

  describe('RAW payloads', () => {
    const renderingOnly = {
      dpi: 300,
      media_width_mm: 104,
      media_height_mm: 500,
      scale_mode: 'none',
      orientation: 'landscape',
      offset_x_mm: -3,
      offset_y_mm: 4,
      margin_top_mm: 1,
      margin_right_mm: 2,
      margin_bottom_mm: 3,
      margin_left_mm: 4,
    }

    it('ignores the options that only shape rendering, and the job echoes what was asked', async () => {
      const res = await fromBase64(renderingOnly)
      expect(res.statusCode).toBe(201)
      expect(res.json()).toMatchObject({ ...renderingOnly, document_format: 'raw', copies: 1 })
    })

    it('still checks colour and duplex, which the printer itself would have to do', async () => {
      const res = await fromBase64({ ...renderingOnly, color_mode: 'color', duplex_mode: 'duplex_long_edge' })
      expect(res.statusCode).toBe(422)
      expect(res.json().details.fields).toEqual([
        { field: 'color_mode', message: 'the printer prints in monochrome only', location: 'body' },
        { field: 'duplex_mode', message: 'the printer prints on one side only', location: 'body' },
      ])
    })
  })
})
