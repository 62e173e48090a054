import { createServer as createTcpServer, type Socket, type Server as TcpServer } from 'node:net'
import { connect as tlsConnect } from 'node:tls'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  type ConnectTarget,
  connectTls,
  fetchPublicDocument,
  type SafeFetchOptions,
} from '../../../cloud/fetch/safe-fetch.ts'
import { type DocumentServer, failure, startDocumentServer } from './document-server.ts'

// Size limits, timeouts, HTTP and TLS failures, against a real HTTPS server on loopback.

let docs: DocumentServer
beforeAll(async () => {
  docs = await startDocumentServer()
})
afterAll(async () => {
  await docs?.server.close()
})
const harness = (overrides?: Partial<SafeFetchOptions>) => docs.harness(overrides)

describe('fetchPublicDocument failures', () => {
  it.each([
    ['/big-chunked', 'body_exceeds_limit'],
    ['/big-length', 'content_length_exceeds_limit'],
  ])('aborts %s as soon as it passes maxBytes (%s)', async (path, reason) => {
    const before = docs.seen.streams.length
    const error = await failure(
      fetchPublicDocument(`https://docs.example.com${path}`, harness({ maxBytes: 100_000 }).options),
    )
    expect(error).toMatchObject({
      code: 'document_too_large',
      status: 413,
      details: { reason, limit_bytes: 100_000 },
    })
    const outcome = await docs.seen.streams[before]
    expect(outcome?.finished).toBe(false) // the server saw the connection close before it had sent everything
    expect(outcome?.sent).toBeLessThan(64 * 1024 * 1024)
  })

  it('refuses a declared Content-Length over maxBytes before reading the body', async () => {
    const before = docs.seen.streams.length
    const error = await failure(
      fetchPublicDocument(
        'https://docs.example.com/declared-large',
        harness({ maxBytes: 1_000_000 }).options,
      ),
    )
    expect(error).toMatchObject({
      code: 'document_too_large',
      details: { reason: 'content_length_exceeds_limit', limit_bytes: 1_000_000 },
    })
    expect((await docs.seen.streams[before])?.finished).toBe(false)
  })

  it.each([['/slow-headers'], ['/slow-body']])('gives up on %s at the total timeout', async (path) => {
    const options = harness({ totalTimeoutMs: 250 }).options
    const error = await failure(fetchPublicDocument(`https://docs.example.com${path}`, options))
    expect(error).toMatchObject({
      code: 'document_fetch_failed',
      status: 422,
      details: { reason: 'total_timeout' },
    })
  })

  it('times out a resolver that never answers', async () => {
    const options = harness({ connectTimeoutMs: 200, resolve: () => new Promise<string[]>(() => {}) }).options
    const error = await failure(fetchPublicDocument('https://docs.example.com/doc.pdf', options))
    expect(error).toMatchObject({ code: 'document_fetch_failed', details: { reason: 'connect_timeout' } })
  })

  describe('against a TCP server that never speaks TLS', () => {
    let silent: TcpServer
    let silentPort = 0
    const accepted = new Set<Socket>()
    beforeAll(async () => {
      silent = createTcpServer((socket) => {
        accepted.add(socket)
        socket.resume() // reads and ignores the ClientHello; answers nothing
      })
      await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve))
      silentPort = (silent.address() as { port: number }).port
    })
    afterAll(async () => {
      for (const socket of accepted) socket.destroy()
      await new Promise<void>((resolve) => silent.close(() => resolve()))
    })

    it('times out the handshake', async () => {
      const options = harness({
        connectTimeoutMs: 200,
        connect: (target) =>
          connectTls({ ...target, address: '127.0.0.1', port: silentPort }, docs.certificate.cert),
      }).options
      const error = await failure(fetchPublicDocument('https://docs.example.com/doc.pdf', options))
      expect(error).toMatchObject({ code: 'document_fetch_failed', details: { reason: 'connect_timeout' } })
    })
  })

  it('fails with http_status on a non-2xx answer', async () => {
    const error = await failure(fetchPublicDocument('https://docs.example.com/missing', harness().options))
    expect(error).toMatchObject({
      code: 'document_fetch_failed',
      status: 422,
      details: { reason: 'http_status', http_status: 404 },
    })
  })

  it('fails when the body is cut short', async () => {
    const error = await failure(fetchPublicDocument('https://docs.example.com/truncated', harness().options))
    expect(error).toMatchObject({ code: 'document_fetch_failed', details: { reason: 'body_incomplete' } })
  })

  it('refuses a content-encoded body', async () => {
    const error = await failure(fetchPublicDocument('https://docs.example.com/gzip', harness().options))
    expect(error).toMatchObject({ details: { reason: 'unsupported_content_encoding' } })
  })

  it('fails with tls_error when the certificate does not name the host', async () => {
    const error = await failure(fetchPublicDocument('https://other.example.com/doc.pdf', harness().options))
    expect(error).toMatchObject({
      code: 'document_fetch_failed',
      status: 422,
      details: { reason: 'tls_error', tls_error: 'ERR_TLS_CERT_ALTNAME_INVALID' },
    })
  })

  it('fails with tls_error when the certificate is not trusted', async () => {
    const options = harness({
      connect: (target) => connectTls({ ...target, address: '127.0.0.1', port: docs.server.port }),
    }).options
    const error = await failure(fetchPublicDocument('https://docs.example.com/doc.pdf', options))
    expect(error).toMatchObject({ code: 'document_fetch_failed', details: { reason: 'tls_error' } })
  })

  it('verifies the certificate itself even when a connector does not', async () => {
    const careless = (target: ConnectTarget) =>
      tlsConnect({
        host: '127.0.0.1',
        port: docs.server.port,
        servername: target.servername,
        rejectUnauthorized: false,
      })
    for (const url of ['https://docs.example.com/doc.pdf', 'https://other.example.com/doc.pdf']) {
      const error = await failure(fetchPublicDocument(url, harness({ connect: careless }).options))
      expect(error).toMatchObject({ code: 'document_fetch_failed', details: { reason: 'tls_error' } })
    }
  })
})
