import { createServer as createTcpServer } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  type ConnectTarget,
  connectTls,
  fetchPublicDocument,
  type SafeFetchOptions,
} from '../../../cloud/fetch/safe-fetch.ts'
import {
  DOCUMENT,
  type DocumentServer,
  failure,
  PUBLIC,
  PUBLIC_V6,
  startDocumentServer,
} from './document-server.ts'

// The address guard and redirects, against a real HTTPS server on loopback reached through the seams.

let docs: DocumentServer
beforeAll(async () => {
  docs = await startDocumentServer()
})
afterAll(async () => {
  await docs?.server.close()
})
const harness = (overrides?: Partial<SafeFetchOptions>) => docs.harness(overrides)

describe('fetchPublicDocument', () => {
  it('fetches the exact bytes through the checked address with SNI for the host name', async () => {
    const { options, resolved, connected } = harness()
    const document = await fetchPublicDocument('https://docs.example.com/doc.pdf', options)
    expect(document.bytes.equals(DOCUMENT)).toBe(true)
    expect(document.contentType).toBe('application/pdf')
    expect(document.filename).toBe('doc.pdf')
    expect(document.finalUrl).toBe('https://docs.example.com/doc.pdf')
    expect(resolved).toEqual(['docs.example.com'])
    expect(connected).toEqual([{ address: PUBLIC, port: 443, servername: 'docs.example.com' }])
    const headers = docs.seen.headers.at(-1)
    expect(headers?.host).toBe('docs.example.com')
    expect(headers?.['user-agent']).toBe('print-hub-fetcher/1')
    expect(headers?.accept).toBe('application/pdf, application/octet-stream, */*')
  })

  it('takes the filename from Content-Disposition (RFC 8187 form first)', async () => {
    const document = await fetchPublicDocument('https://docs.example.com/download?id=7', harness().options)
    expect(document.filename).toBe('résumé.pdf')
    expect(document.contentType).toBe('application/octet-stream')
  })

  it('accepts a body of exactly maxBytes', async () => {
    const document = await fetchPublicDocument(
      'https://docs.example.com/exact-limit',
      harness({ maxBytes: 1000 }).options,
    )
    expect(document.bytes.length).toBe(1000)
  })

  it('follows redirects, validating and connecting each hop afresh', async () => {
    const { options, connected } = harness()
    const document = await fetchPublicDocument('https://docs.example.com/redirect-ok', options)
    expect(document.finalUrl).toBe('https://redirect.example.com/doc.pdf')
    expect(document.bytes.equals(DOCUMENT)).toBe(true)
    expect(connected.map((target) => target.servername)).toEqual(['docs.example.com', 'redirect.example.com'])
    const relative = await fetchPublicDocument('https://docs.example.com/redirect-relative', options)
    expect(relative.finalUrl).toBe('https://docs.example.com/doc.pdf')
  })

  it('moves on to the next checked address when one refuses the connection', async () => {
    const closed = createTcpServer()
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve))
    const closedPort = (closed.address() as { port: number }).port
    await new Promise<void>((resolve) => closed.close(() => resolve()))
    const { options, connected } = harness()
    const connect = (target: ConnectTarget) => {
      connected.push(target)
      const port = target.address === PUBLIC ? docs.server.port : closedPort
      return connectTls({ ...target, address: '127.0.0.1', port }, docs.certificate.cert)
    }
    const resolve = async () => [PUBLIC_V6, PUBLIC]
    const document = await fetchPublicDocument('https://docs.example.com/doc.pdf', {
      ...options,
      resolve,
      connect,
    })
    expect(document.bytes.equals(DOCUMENT)).toBe(true)
    expect(connected.map((target) => target.address)).toEqual([PUBLIC_V6, PUBLIC])
  })

  it.each([
    ['loopback.example.com', 'loopback_address'],
    ['private.example.com', 'private_address'],
    ['metadata.example.com', 'link_local_address'],
    ['v6loopback.example.com', 'loopback_address'],
    ['mapped.example.com', 'ipv4_mapped_address'],
    ['mixed.example.com', 'private_address'],
  ])('refuses %s, which resolves to a non-public address, before connecting', async (host, reason) => {
    const { options, connected } = harness()
    const error = await failure(fetchPublicDocument(`https://${host}/doc.pdf`, options))
    expect(error).toMatchObject({ code: 'url_not_allowed', status: 400, details: { reason } })
    expect(connected).toEqual([])
  })

  it('refuses non-public IP literals without resolving or connecting', async () => {
    const { options, resolved, connected } = harness()
    for (const url of ['https://127.0.0.1/', 'https://0x7f.1/', 'https://[::ffff:127.0.0.1]/']) {
      const error = await failure(fetchPublicDocument(url, options))
      expect(error.code).toBe('url_not_allowed')
    }
    expect(resolved).toEqual([])
    expect(connected).toEqual([])
  })

  it('connects to a public IP literal directly and checks the certificate against that IP', async () => {
    const { options, resolved, connected } = harness()
    const error = await failure(fetchPublicDocument(`https://${PUBLIC}:8443/doc.pdf`, options))
    expect(resolved).toEqual([])
    expect(connected).toEqual([{ address: PUBLIC, port: 8443, servername: PUBLIC }])
    expect(error).toMatchObject({ code: 'document_fetch_failed', details: { reason: 'tls_error' } })
  })

  it.each([
    ['/redirect-private', 'private_address'],
    ['/redirect-metadata', 'link_local_address'],
    ['/redirect-credentials', 'credentials_in_url'],
    ['/redirect-http', 'redirect_to_http'],
  ])('refuses the unsafe redirect %s (%s)', async (path, reason) => {
    const { options, connected } = harness()
    const error = await failure(fetchPublicDocument(`https://docs.example.com${path}`, options))
    expect(error).toMatchObject({ code: 'url_not_allowed', status: 400, details: { reason } })
    expect(connected).toHaveLength(1)
  })

  it('refuses more than maxRedirects redirects', async () => {
    const { options, connected } = harness({ maxRedirects: 3 })
    const error = await failure(fetchPublicDocument('https://docs.example.com/loop', options))
    expect(error).toMatchObject({ code: 'url_not_allowed', details: { reason: 'too_many_redirects' } })
    expect(connected).toHaveLength(4)
  })

  it('fails with dns_lookup_failed for an unknown name', async () => {
    const error = await failure(fetchPublicDocument('https://nowhere.example.com/doc.pdf', harness().options))
    expect(error).toMatchObject({
      code: 'document_fetch_failed',
      details: { reason: 'dns_lookup_failed', cause: 'ENOTFOUND' },
    })
  })

  it('refuses a malformed or non-https URL before any lookup', async () => {
    const { options, resolved } = harness()
    expect((await failure(fetchPublicDocument('http://docs.example.com/doc.pdf', options))).code).toBe(
      'invalid_url_request',
    )
    expect((await failure(fetchPublicDocument('not a url', options))).code).toBe('invalid_url_request')
    expect(resolved).toEqual([])
  })
})
