import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { connectTls } from '../../cloud/fetch/safe-fetch.ts'
import { makePdf } from '../helpers/pdf.ts'
import { makeCertificate, startHttpsServer, type TestServer } from './fetch/tls-fixture.ts'
import { ESCPOS_RECEIPT, startTestCloud, type TestAccount, type TestCloud } from './test-cloud.ts'

/** Test DNS: names the test certificate covers resolve to a public address; the others to private ones. */
const NAMES: Record<string, string[]> = {
  'docs.example.com': ['93.184.215.14'],
  'intranet.example.com': ['10.1.2.3'],
  'metadata.example.com': ['169.254.169.254'],
}

describe('POST /api/v1/print-jobs/from-url', () => {
  const pdf = makePdf(1)
  let server: TestServer
  let cloud: TestCloud
  let account: TestAccount
  const connected: string[] = []

  beforeAll(async () => {
    const certificate = makeCertificate('docs.example.com', ['docs.example.com'])
    server = await startHttpsServer(certificate, (req, res) => {
      if (req.url === '/invoice.pdf') res.writeHead(200, { 'content-type': 'application/pdf' }).end(pdf)
      else if (req.url === '/receipt.bin') res.writeHead(200).end(ESCPOS_RECEIPT)
      else if (req.url === '/picture.png') res.writeHead(200).end(Buffer.from('89504e470d0a1a0a0000', 'hex'))
      else if (req.url === '/to-intranet')
        res.writeHead(302, { location: 'https://intranet.example.com/x.pdf' }).end()
      else if (req.url === '/big.pdf') res.writeHead(200).end(Buffer.alloc(5000, 0x20))
      else res.writeHead(404).end()
    })
    cloud = await startTestCloud({
      env: { MAX_DOCUMENT_BYTES: '4096' },
      fetchSeams: {
        resolve: async (host) =>
          NAMES[host] ?? Promise.reject(Object.assign(new Error('nx'), { code: 'ENOTFOUND' })),
        connect: (target) => {
          connected.push(target.address)
          return connectTls({ ...target, address: '127.0.0.1', port: server.port }, certificate.cert)
        },
      },
    })
    account = await cloud.createAccount()
  })
  afterAll(async () => {
    await cloud.close()
    await server.close()
  })

  const create = async (extra: Record<string, unknown>) =>
    cloud.app.inject({
      method: 'POST',
      url: '/api/v1/print-jobs/from-url',
      headers: { authorization: `Bearer ${await account.token()}` },
      payload: { printer_id: account.receiptPrinterId, ...extra },
    })

  it('fetches a public HTTPS PDF, sniffs it and creates the job', async () => {
    const res = await create({ document_url: 'https://docs.example.com/invoice.pdf' })
    expect(res.statusCode).toBe(201)
    expect(res.json()).toMatchObject({
      document_format: 'pdf',
      document_mime_type: 'application/pdf',
      status: 'pending',
    })
  })

  it('fetches a RAW payload when the raw language is declared', async () => {
    const res = await create({
      document_url: 'https://docs.example.com/receipt.bin',
      document_format: 'raw',
      document_raw_language: 'escpos',
    })
    expect(res.statusCode).toBe(201)
    expect(res.json()).toMatchObject({ document_format: 'raw', document_raw_language: 'escpos' })
  })

  it.each([
    ['http://docs.example.com/invoice.pdf', 'invalid_url_request'],
    ['https://user:pw@docs.example.com/invoice.pdf', 'invalid_url_request'],
    ['not a url', 'invalid_url_request'],
    ['https://127.0.0.1/x.pdf', 'url_not_allowed'],
    ['https://2130706433/x.pdf', 'url_not_allowed'],
    ['https://0x7f.1/x.pdf', 'url_not_allowed'],
    ['https://[::ffff:127.0.0.1]/x.pdf', 'url_not_allowed'],
    ['https://169.254.169.254/latest/meta-data/', 'url_not_allowed'],
    ['https://metadata.example.com/latest/meta-data/', 'url_not_allowed'],
    ['https://intranet.example.com/x.pdf', 'url_not_allowed'],
    ['https://docs.example.com/to-intranet', 'url_not_allowed'],
  ])('refuses %s with 400 %s and connects nowhere private', async (url, code) => {
    connected.length = 0
    const res = await create({ document_url: url })
    expect(res.statusCode).toBe(400)
    expect(res.json()).toMatchObject({ error: 'invalid_request', error_code: code })
    expect(connected.every((address) => address === '93.184.215.14')).toBe(true)
  })

  it('answers 413 for a remote document over the size limit, 415 for an unsupported type, 422 for a 404', async () => {
    const big = await create({ document_url: 'https://docs.example.com/big.pdf' })
    expect(big.statusCode).toBe(413)
    expect(big.json().error_code).toBe('document_too_large')
    const png = await create({ document_url: 'https://docs.example.com/picture.png' })
    expect(png.statusCode).toBe(415)
    expect(png.json().error_code).toBe('unsupported_document_type')
    const missing = await create({ document_url: 'https://docs.example.com/nothing.pdf' })
    expect(missing.statusCode).toBe(422)
    expect(missing.json()).toMatchObject({
      error_code: 'document_fetch_failed',
      details: { http_status: 404 },
    })
  })
})
