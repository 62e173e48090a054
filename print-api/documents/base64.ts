import { ApiError } from '../api-error.ts'
import { tooLarge } from './document-checks.ts'

const LINE_FEED = 0x0a
const CARRIAGE_RETURN = 0x0d
const PAD = 0x3d // '='

/** RFC 4648 §4, Table 1: the 64 characters of the Base64 alphabet. */
const ALPHABET = new Uint8Array(128)
for (const c of 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/')
  ALPHABET[c.charCodeAt(0)] = 1

function invalid(reason: string, message: string): ApiError {
  return new ApiError('invalid_base64', message, { reason, field: 'document_base64' })
}

/**
 * One pass over the text (no regular expression: a backtracking one overflowed the stack on a few MiB).
 * `length` counts every character but line breaks (`\n`, `\r\n`); `valid` is whether they are whole
 * 4-character groups of the alphabet with `=` padding (at most two) only at the end.
 */
function scan(text: string): { length: number; valid: boolean } {
  let length = 0
  let padding = 0
  let valid = true
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c === LINE_FEED) continue
    if (c === CARRIAGE_RETURN && text.charCodeAt(i + 1) === LINE_FEED) continue
    length++
    if (c === PAD) padding++
    else if (padding > 0 || c >= 128 || ALPHABET[c] === 0) valid = false
  }
  return { length, valid: valid && length > 0 && length % 4 === 0 && padding <= 2 }
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
  const { length, valid } = scan(text)
  if (Math.floor(length / 4) * 3 - 2 > maxBytes) throw tooLarge(maxBytes)
  if (!valid) throw invalid('not_base64', 'document_base64 is not valid padded Base64 (RFC 4648 §4).')
  // Node's decoder skips the line breaks; everything else was checked above.
  return Buffer.from(text, 'base64')
}
