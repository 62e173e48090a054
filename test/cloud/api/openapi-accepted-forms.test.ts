import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ESCPOS_RECEIPT, startTestCloud, type TestAccount, type TestCloud } from '../test-cloud.ts'
import { bearer, listen } from './api-helpers.ts'
import { contractChecker } from './typed-client/contract-check.ts'

// Issue 26, point 5: what /openapi.json says a request may carry is what the service takes. Each documented
// form of a field goes through a validator built from the served document (as a client would check a request
// before sending it) and then to the service over HTTP; every answer is checked against the document too.

const PATH = '/api/v1/print-jobs/from-base64'
const lines = Buffer.from('A line of the receipt\n'.repeat(10))
/** ESC/POS documents whose Base64 ends in `=`, `==` and no padding (their lengths are 2, 1 and 0 mod 3). */
const RECEIPTS = [0, 1, 2].map((extra) =>
  Buffer.concat([ESCPOS_RECEIPT, lines, Buffer.from('x'.repeat(extra))]),
)
const b64 = (bytes: Buffer) => bytes.toString('base64')
const wrapped = (text: string, width: number, lineBreak: string) =>
  (text.match(new RegExp(`.{1,${width}}`, 'g')) ?? []).join(lineBreak)
const [oneByteShort, whole, twoBytesShort] = RECEIPTS.map(b64) as [string, string, string]

/** Each form the document and docs/printing-api.md describe as accepted (line breaks are ignored, padding is required). */
const ACCEPTED_BASE64: [string, string][] = [
  ['padded with =', oneByteShort],
  ['padded with ==', twoBytesShort],
  ['whole groups, no padding needed', whole],
  ['LF every 76 characters (MIME, RFC 2045 §6.8)', wrapped(whole, 76, '\n')],
  ['CRLF every 76 characters', wrapped(twoBytesShort, 76, '\r\n')],
  ['LF every 64 characters and a final LF (RFC 7468)', `${wrapped(oneByteShort, 64, '\n')}\n`],
]

/** Forms the service refuses (400 invalid_base64); the document must not call them valid either. */
const REFUSED_BASE64: [string, string][] = [
  ['a data: URL', `data:application/vnd.epson-escpos;base64,${whole}`],
  ['the URL-safe alphabet (_ and -)', `${whole.slice(0, -4)}ab_-`],
  ['spaces between lines', wrapped(whole, 76, ' ')],
]

let cloud: TestCloud
let account: TestAccount
let base: string
let token: string
let contract: ReturnType<typeof contractChecker>
beforeAll(async () => {
  cloud = await startTestCloud()
  account = await cloud.createAccount()
  base = await listen(cloud.app)
  const document = (await (await fetch(`${base}/openapi.json`)).json()) as Parameters<
    typeof contractChecker
  >[0]
  contract = contractChecker(document)
  token = await account.token()
})
afterAll(async () => {
  await cloud?.close()
})

const body = (fields: Record<string, unknown>) => ({
  document_format: 'raw',
  document_raw_language: 'escpos',
  printer_id: account.receiptPrinterId,
  ...fields,
})

async function send(payload: Record<string, unknown>): Promise<{ status: number; json: Json }> {
  const res = await fetch(`${base}${PATH}`, {
    method: 'POST',
    headers: { ...bearer(token), 'content-type': 'application/json' },
    body: JSON.stringify(payload),
  })
  const checked = await contract.check('POST', PATH, res.clone())
  expect(checked.problems, `the answer ${res.status} as documented`).toEqual([])
  return { status: res.status, json: (await res.json()) as Json }
}
type Json = Record<string, unknown>

describe('POST /api/v1/print-jobs/from-base64: the document and the service agree', () => {
  it.each(ACCEPTED_BASE64)(
    'document_base64 %s: valid by the document, 201 from the service',
    async (_, text) => {
      const payload = body({ document_base64: text })
      expect(contract.checkRequest('POST', PATH, 'application/json', payload)).toEqual([])
      const { status, json } = await send(payload)
      expect(status, JSON.stringify(json)).toBe(201)
      const document = await cloud.storage.documents.findById(account.accountId, json.document_id as string)
      expect(document?.size_bytes).toBe(Buffer.from(text, 'base64').length)
    },
  )

  it.each(REFUSED_BASE64)(
    'document_base64 as %s: invalid by the document, 400 invalid_base64 from the service',
    async (_, text) => {
      const payload = body({ document_base64: text })
      expect(contract.checkRequest('POST', PATH, 'application/json', payload)).not.toEqual([])
      const { status, json } = await send(payload)
      expect(status).toBe(400)
      expect(json.error_code).toBe('invalid_base64')
    },
  )

  it.each<[string, Record<string, unknown>]>([
    ['document_filename null', { document_filename: null }],
    ['document_filename a name', { document_filename: 'receipt.bin' }],
    ['media sizes and dpi null', { media_width_mm: null, media_height_mm: null, dpi: null }],
    ['copies at its bounds', { copies: 99 }],
    ['offsets at their bounds', { offset_x_mm: -2000, offset_y_mm: 2000 }],
  ])('%s: valid by the document, 201 from the service', async (_, fields) => {
    const payload = body({ document_base64: whole, ...fields })
    expect(contract.checkRequest('POST', PATH, 'application/json', payload)).toEqual([])
    const { status, json } = await send(payload)
    expect(status, JSON.stringify(json)).toBe(201)
  })
})
