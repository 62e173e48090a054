import { existsSync } from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { makePdf } from '../helpers/pdf.ts'
import { ESCPOS_RECEIPT, startTestCloud, type TestAccount, type TestCloud } from './test-cloud.ts'

function multipart(parts: { name: string; filename?: string; content: Buffer | string }[]) {
  const boundary = 'test-boundary-7d1'
  const chunks: Buffer[] = []
  for (const part of parts) {
    const disposition = `form-data; name="${part.name}"${part.filename ? `; filename="${part.filename}"` : ''}`
    chunks.push(Buffer.from(`--${boundary}\r\nContent-Disposition: ${disposition}\r\n\r\n`))
    chunks.push(Buffer.isBuffer(part.content) ? part.content : Buffer.from(part.content))
    chunks.push(Buffer.from('\r\n'))
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`))
  return { payload: Buffer.concat(chunks), contentType: `multipart/form-data; boundary=${boundary}` }
}

describe('POST /api/v1/documents', () => {
  let cloud: TestCloud
  let account: TestAccount
  beforeAll(async () => {
    cloud = await startTestCloud({ env: { MAX_DOCUMENT_BYTES: '65536' } })
    account = await cloud.createAccount()
  })
  afterAll(() => cloud.close())

  const upload = async (parts: Parameters<typeof multipart>[0]) => {
    const { payload, contentType } = multipart(parts)
    return cloud.app.inject({
      method: 'POST',
      url: '/api/v1/documents',
      headers: { authorization: `Bearer ${await account.token()}`, 'content-type': contentType },
      payload,
    })
  }

  it('recognises a PDF by its bytes and returns id, type, size and SHA-256', async () => {
    const pdf = makePdf(2)
    const res = await upload([{ name: 'file', filename: 'invoice.pdf', content: pdf }])
    expect(res.statusCode).toBe(201)
    const { createHash } = await import('node:crypto')
    const sha256 = createHash('sha256').update(pdf).digest('hex')
    expect(res.json()).toEqual({
      document_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      document_mime_type: 'application/pdf',
      document_format: 'pdf',
      document_raw_language: null,
      size_bytes: pdf.length,
      sha256,
      filename: 'invoice.pdf',
      created_at: expect.any(String),
    })
    expect(
      existsSync(path.join(cloud.dataDir, 'documents', sha256.slice(0, 2), sha256.slice(2, 4), sha256)),
    ).toBe(true)
  })

  it('takes a RAW payload with an explicit raw language', async () => {
    const res = await upload([
      { name: 'document_format', content: 'raw' },
      { name: 'document_raw_language', content: 'escpos' },
      { name: 'file', filename: 'receipt.bin', content: ESCPOS_RECEIPT },
    ])
    expect(res.statusCode).toBe(201)
    expect(res.json()).toMatchObject({
      document_format: 'raw',
      document_raw_language: 'escpos',
      size_bytes: ESCPOS_RECEIPT.length,
    })
  })

  it('answers 415 for RAW bytes without a raw language', async () => {
    const res = await upload([{ name: 'file', filename: 'receipt.bin', content: ESCPOS_RECEIPT }])
    expect(res.statusCode).toBe(415)
    expect(res.json().error_code).toBe('unsupported_document_type')
  })

  it('answers 413 for a file over the limit', async () => {
    const res = await upload([{ name: 'file', filename: 'big.pdf', content: Buffer.alloc(70_000, 0x20) }])
    expect(res.statusCode).toBe(413)
    expect(res.json().error_code).toBe('document_too_large')
  })

  it('answers 422 for a broken PDF and for bytes that contradict the declared format', async () => {
    const truncated = makePdf(1).subarray(0, 200)
    const broken = await upload([{ name: 'file', filename: 'broken.pdf', content: truncated }])
    expect(broken.statusCode).toBe(422)
    expect(broken.json().error_code).toBe('pdf_invalid')
    const mismatch = await upload([
      { name: 'document_format', content: 'raw' },
      { name: 'document_raw_language', content: 'zpl' },
      { name: 'file', filename: 'x.pdf', content: makePdf(1) },
    ])
    expect(mismatch.statusCode).toBe(422)
    expect(mismatch.json().error_code).toBe('document_format_mismatch')
  })

  it('answers 422 naming bad fields and a missing file', async () => {
    const res = await upload([{ name: 'document_format', content: 'docx' }])
    expect(res.statusCode).toBe(422)
    expect(res.json().details.fields.map((f: { field: string }) => f.field)).toEqual([
      'document_format',
      'file',
    ])
  })

  it('answers 400 for a body that is not multipart (415 is for the document type)', async () => {
    const res = await cloud.app.inject({
      method: 'POST',
      url: '/api/v1/documents',
      headers: { authorization: `Bearer ${await account.token()}`, 'content-type': 'application/json' },
      payload: { file: 'x' },
    })
    expect(res.statusCode).toBe(400)
    expect(res.json()).toMatchObject({ error: 'invalid_request', error_code: 'unsupported_content_type' })
  })
})
