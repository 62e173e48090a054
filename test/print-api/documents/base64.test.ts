import { describe, expect, it } from 'vitest'
import { ApiError } from '../../../print-api/api-error.ts'
import { decodeDocumentBase64 } from '../../../print-api/documents/base64.ts'
import { ESCPOS_RECEIPT, startTestCloud } from '../../cloud/test-cloud.ts'

const MiB = 1024 * 1024

/** The ApiError `decode` throws (fails the test when it returns). */
function failure(decode: () => unknown): ApiError {
  try {
    decode()
  } catch (error) {
    if (error instanceof ApiError) return error
    throw error
  }
  throw new Error('expected an ApiError')
}

/** A valid ESC/POS document of about `size` bytes: ESC @, lines of text, a partial cut. */
function escposDocument(size: number): Buffer {
  const line = Buffer.from('Item 0001 ...................... 12.50\n', 'ascii')
  const body = Buffer.alloc(size - ESCPOS_RECEIPT.length)
  for (let at = 0; at < body.length; at += line.length) line.copy(body, at)
  body.fill(0x0a, body.length - (body.length % line.length))
  return Buffer.concat([Buffer.from([0x1b, 0x40]), body, Buffer.from([0x1d, 0x56, 0x42, 0x00])])
}

describe('decodeDocumentBase64', () => {
  it.each([
    ['QUJD', 'ABC'],
    ['QUI=', 'AB'],
    ['QQ==', 'A'],
    ['QUJD\nREVG', 'ABCDEF'],
    ['QUJD\r\nREVG\r\n', 'ABCDEF'],
  ])('decodes %j', (text, decoded) => {
    expect(decodeDocumentBase64(text, 1024).toString('latin1')).toBe(decoded)
  })

  it.each([
    ['', 'not_base64'],
    ['\n', 'not_base64'],
    ['QUJ', 'not_base64'],
    ['QUJD=', 'not_base64'],
    ['QU=I', 'not_base64'],
    ['Q===', 'not_base64'],
    ['QQ=', 'not_base64'],
    ['QUJ D', 'not_base64'],
    ['QUJD\tREVG', 'not_base64'],
    ['QUJD\rREVG', 'not_base64'],
    ['QUJ-', 'not_base64'],
    ['QUJ_', 'not_base64'],
    ['QQ==QUJD', 'not_base64'],
    ['QUI=QUI=', 'not_base64'],
    ['QUJDé', 'not_base64'],
    ['data:application/pdf;base64,JVBERi0=', 'data_url_prefix'],
    ['  DATA:,QUJD', 'data_url_prefix'],
  ])('refuses %j with 400 invalid_base64 (%s)', (text, reason) => {
    const error = failure(() => decodeDocumentBase64(text, 1024))
    expect(error.code).toBe('invalid_base64')
    expect(error.status).toBe(400)
    expect(error.details).toStrictEqual({ reason, field: 'document_base64' })
  })

  it('checks the size before decoding: text whose decoded size is over the limit is a 413', () => {
    const error = failure(() => decodeDocumentBase64('!'.repeat(4 * 400), 1024))
    expect(error.code).toBe('document_too_large')
    expect(error.details).toStrictEqual({ limit_bytes: 1024 })
  })

  it('decodes a 12 MiB document (the check is linear, not a backtracking regular expression)', () => {
    const document = escposDocument(12 * MiB)
    const decoded = decodeDocumentBase64(document.toString('base64'), 50 * MiB)
    expect(decoded.equals(document)).toBe(true)
  })

  it('refuses a 12 MiB document with one bad character near its end', () => {
    const text = escposDocument(12 * MiB).toString('base64')
    const bad = `${text.slice(0, -10)}*${text.slice(-9)}`
    expect(failure(() => decodeDocumentBase64(bad, 50 * MiB)).code).toBe('invalid_base64')
  })
})

describe('POST /api/v1/print-jobs/from-base64 with a large document', () => {
  it.each([4, 12])('creates a job from a valid %i MiB ESC/POS document (201, not 500)', async (mib) => {
    const cloud = await startTestCloud()
    try {
      const account = await cloud.createAccount()
      const document = escposDocument(mib * MiB)
      const res = await cloud.app.inject({
        method: 'POST',
        url: '/api/v1/print-jobs/from-base64',
        headers: { authorization: `Bearer ${await account.token()}` },
        payload: {
          document_base64: document.toString('base64'),
          document_format: 'raw',
          document_raw_language: 'escpos',
          printer_id: account.receiptPrinterId,
        },
      })
      expect(res.statusCode, res.body.slice(0, 300)).toBe(201)
      expect(res.json()).toMatchObject({ status: 'pending', document_raw_language: 'escpos' })
      const stored = await cloud.storage.documents.findById(account.accountId, res.json().document_id)
      expect(stored?.size_bytes).toBe(document.length)
    } finally {
      await cloud.close()
    }
  })
})
