import { randomBytes } from 'node:crypto'
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http'
import { type ConnectTarget, connectTls, type SafeFetchOptions } from '../../../cloud/fetch/safe-fetch.ts'
import { ApiError } from '../../../print-api/api-error.ts'
import {
  makeCertificate,
  type StreamOutcome,
  startHttpsServer,
  streamBody,
  type TestCertificate,
  type TestServer,
} from './tls-fixture.ts'

export const PUBLIC = '93.184.215.14' // what the test resolver hands out for the names the certificate covers
export const PUBLIC_V6 = '2606:2800:21f:cb07:6820:80da:af6b:8b2c'
export const DOCUMENT = randomBytes(50_000)
const NAMES: Record<string, string[]> = {
  'docs.example.com': [PUBLIC],
  'redirect.example.com': [PUBLIC],
  'other.example.com': [PUBLIC],
  'internal.example.com': ['10.0.0.1'],
  'loopback.example.com': ['127.0.0.1'],
  'private.example.com': ['10.0.0.1'],
  'metadata.example.com': ['169.254.169.254'],
  'v6loopback.example.com': ['::1'],
  'mapped.example.com': ['::ffff:7f00:1'],
  'mixed.example.com': [PUBLIC, '192.168.1.10'],
}

/** What the server saw: each request's headers, and how each streamed body ended. */
export interface Seen {
  headers: IncomingHttpHeaders[]
  streams: Promise<StreamOutcome>[]
}

const REDIRECTS: Record<string, [number, string]> = {
  '/redirect-ok': [301, 'https://redirect.example.com/doc.pdf'],
  '/redirect-relative': [307, '/doc.pdf'],
  '/redirect-private': [302, 'https://internal.example.com/doc.pdf'],
  '/redirect-metadata': [302, 'https://169.254.169.254/latest/meta-data/'],
  '/redirect-http': [302, 'http://docs.example.com/doc.pdf'],
  '/redirect-credentials': [303, 'https://user:pw@docs.example.com/doc.pdf'],
  '/loop': [302, '/loop'],
}

function route(seen: Seen, req: IncomingMessage, res: ServerResponse): void {
  seen.headers.push(req.headers)
  const redirect = REDIRECTS[req.url ?? '']
  if (redirect !== undefined) {
    res.writeHead(redirect[0], { location: redirect[1] }).end()
    return
  }
  switch (req.url) {
    case '/doc.pdf':
      res.writeHead(200, { 'content-type': 'Application/PDF; charset=binary' }).end(DOCUMENT)
      return
    case '/download?id=7':
      res.writeHead(200, {
        'content-type': 'application/octet-stream',
        'content-disposition': 'attachment; filename="x.pdf"; filename*=UTF-8\'\'r%C3%A9sum%C3%A9.pdf',
      })
      res.end(DOCUMENT)
      return
    case '/big-chunked':
      res.writeHead(200, { 'content-type': 'application/pdf' })
      seen.streams.push(streamBody(res, 64 * 1024 * 1024))
      return
    case '/big-length':
      res.writeHead(200, { 'content-length': String(64 * 1024 * 1024) })
      seen.streams.push(streamBody(res, 64 * 1024 * 1024))
      return
    case '/declared-large':
      res.writeHead(200, { 'content-length': String(10 * 1024 * 1024) })
      res.write(Buffer.alloc(100))
      seen.streams.push(
        new Promise((resolve) => res.once('close', () => resolve({ sent: 100, finished: false }))),
      )
      return
    case '/exact-limit':
      res.writeHead(200).end(Buffer.alloc(1000, 1))
      return
    case '/gzip':
      res.writeHead(200, { 'content-encoding': 'gzip' }).end(Buffer.alloc(10))
      return
    case '/slow-headers':
      return // never answers
    case '/slow-body':
      res.writeHead(200, { 'content-length': '1000' })
      res.write(Buffer.alloc(10))
      return
    case '/truncated':
      res.writeHead(200, { 'content-length': '1000' })
      res.write(Buffer.alloc(10), () => res.destroy())
      return
    default:
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found')
  }
}

export interface DocumentServer {
  certificate: TestCertificate
  server: TestServer
  seen: Seen
  /** Options whose seams resolve through NAMES and send every connection to this server. */
  harness: (overrides?: Partial<SafeFetchOptions>) => Harness
}

export interface Harness {
  options: SafeFetchOptions
  resolved: string[]
  connected: ConnectTarget[]
}

/** A real HTTPS server on loopback with a fresh self-signed certificate for docs. and redirect.example.com. */
export async function startDocumentServer(): Promise<DocumentServer> {
  const certificate = makeCertificate('docs.example.com', ['docs.example.com', 'redirect.example.com'])
  const seen: Seen = { headers: [], streams: [] }
  const server = await startHttpsServer(certificate, (req, res) => route(seen, req, res))
  const harness = (overrides: Partial<SafeFetchOptions> = {}): Harness => {
    const resolved: string[] = []
    const connected: ConnectTarget[] = []
    const options: SafeFetchOptions = {
      maxBytes: 1_000_000,
      connectTimeoutMs: 2_000,
      totalTimeoutMs: 5_000,
      maxRedirects: 3,
      resolve: async (hostname) => {
        resolved.push(hostname)
        const addresses = NAMES[hostname]
        if (addresses === undefined) throw Object.assign(new Error('not found'), { code: 'ENOTFOUND' })
        return addresses
      },
      connect: (target) => {
        connected.push(target)
        return connectTls({ ...target, address: '127.0.0.1', port: server.port }, certificate.cert)
      },
      ...overrides,
    }
    return { options, resolved, connected }
  }
  return { certificate, server, seen, harness }
}

/** The ApiError a promise rejects with. */
export async function failure(promise: Promise<unknown>): Promise<ApiError> {
  try {
    await promise
  } catch (error) {
    if (error instanceof ApiError) return error
    throw error
  }
  throw new Error('the fetch succeeded')
}
