import { ApiError } from '../errors.ts'
import { tooLarge } from './intake.ts'

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/

function invalid(reason: string, message: string): ApiError {
  return new ApiError('invalid_base64', message, { reason, field: 'document_base64' })
}

/**
 * Decodes `document_base64` strictly (RFC 4648 §4, padded). Line breaks, as MIME encoders insert them, are
 * ignored; a `data:` URL prefix, other characters or bad padding are a 400. The size is checked before
 * decoding.
 */
export function decodeDocumentBase64(text: string, maxBytes: number): Buffer {
  if (/^\s*data:/i.test(text)) {
    throw invalid('data_url_prefix', 'document_base64 must be plain Base64, without a data: URL prefix.')
  }
  const compact = text.replace(/\r?\n/g, '')
  if (Math.floor(compact.length / 4) * 3 - 2 > maxBytes) throw tooLarge(maxBytes)
  if (compact.length === 0 || !BASE64.test(compact)) {
    throw invalid('not_base64', 'document_base64 is not valid padded Base64 (RFC 4648 §4).')
  }
  return Buffer.from(compact, 'base64')
}
