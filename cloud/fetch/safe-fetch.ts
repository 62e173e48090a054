import type { IncomingMessage } from 'node:http'
import { request } from 'node:https'
import type { TLSSocket } from 'node:tls'
import { ApiError, isApiError } from '../../print-api/api-error.ts'
import { documentFilename } from '../../print-api/documents/filename.ts'
import { abortable, deadline } from './abortable.ts'
import { type ConnectTarget, openConnection } from './connect.ts'
import { fetchFailed, notAllowed, socketFailed, tooLarge } from './failures.ts'
import { parseDocumentUrl } from './url-policy.ts'

export { type ConnectTarget, connectTls } from './connect.ts'

export interface SafeFetchOptions {
  /** Enforced while streaming, and up front when Content-Length already says more. */
  maxBytes: number
  /** Per connection: DNS resolution, TCP and the TLS handshake. */
  connectTimeoutMs: number
  /** The whole fetch: every redirect hop and the body. */
  totalTimeoutMs: number
  maxRedirects: number
  /** Each DNS query's first-try timeout (DNS_TIMEOUT_MS); 2000 by default. */
  dnsTimeoutMs?: number
  /** Tries per name server (DNS_TRIES); 2 by default. */
  dnsTries?: number
  /** Test seam: the name servers to ask (`address:port`); the system's by default. */
  dnsServers?: string[]
  /** Test seam replacing DNS altogether; defaults to A and AAAA queries (`resolveHostAddresses`). */
  resolve?: (hostname: string) => Promise<string[]>
  /** Test seam; defaults to `connectTls`. Called only with an address the policy has accepted. */
  connect?: (target: ConnectTarget) => TLSSocket
  /** An extra trusted CA for the default connector (tests' self-signed certificate). */
  tlsCa?: string | Buffer
}

export interface FetchedDocument {
  bytes: Buffer
  finalUrl: string
  /** The media type of Content-Type, lower-cased and without parameters. */
  contentType: string | null
  /** From Content-Disposition, else the last segment of the final URL's path. */
  filename: string | null
}

/** RFC 9110 §15.4: the redirections that carry a Location to follow. */
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308])

const REQUEST_HEADERS = {
  'User-Agent': 'print-hub-fetcher/1',
  Accept: 'application/pdf, application/octet-stream, */*',
  'Accept-Encoding': 'identity',
  Connection: 'close',
}

/**
 * Fetches a caller-supplied HTTPS URL without letting it reach anything that is not public (SSRF guard).
 * Every hop is validated from scratch: URL policy, DNS resolution, every resolved address checked, then a
 * TLS connection to exactly that checked address with SNI and certificate verification against the host name.
 * The seams in the options only replace resolution and connection; the checks always run.
 */
export async function fetchPublicDocument(url: string, options: SafeFetchOptions): Promise<FetchedDocument> {
  const total = deadline(options.totalTimeoutMs, () =>
    fetchFailed('total_timeout', 'The document fetch timed out.'),
  )
  try {
    let target = parseDocumentUrl(url)
    for (let redirects = 0; ; redirects++) {
      const socket = await openConnection(target, options, total.signal)
      try {
        const response = await sendRequest(target, socket, total.signal)
        const status = response.statusCode ?? 0
        const location = response.headers.location
        if (REDIRECT_STATUSES.has(status) && location !== undefined) {
          if (redirects >= options.maxRedirects) {
            throw notAllowed('too_many_redirects', 'The document URL redirects too many times.')
          }
          target = followRedirect(target, location)
          continue
        }
        if (status < 200 || status > 299) {
          throw fetchFailed('http_status', `The document server answered ${status}.`, { http_status: status })
        }
        const encoding = response.headers['content-encoding']
        if (encoding !== undefined && encoding.trim().toLowerCase() !== 'identity') {
          throw fetchFailed('unsupported_content_encoding', 'The document server sent an encoded body.')
        }
        const bytes = await readBody(response, options.maxBytes, total.signal)
        return {
          bytes,
          finalUrl: target.href,
          contentType: response.headers['content-type']?.split(';')[0]?.trim().toLowerCase() || null,
          filename: documentFilename(response.headers['content-disposition'], target),
        }
      } finally {
        socket.destroy() // no connection reuse, across hosts or otherwise
      }
    }
  } finally {
    total.clear()
  }
}

function sendRequest(url: URL, socket: TLSSocket, signal: AbortSignal): Promise<IncomingMessage> {
  return abortable<IncomingMessage>(
    signal,
    (ok, fail) => {
      const req = request({
        method: 'GET',
        host: url.hostname,
        port: url.port === '' ? 443 : Number(url.port),
        path: `${url.pathname}${url.search}`,
        setHost: false,
        headers: { Host: url.host, ...REQUEST_HEADERS },
        createConnection: () => socket,
      })
      req.once('response', ok)
      req.on('error', (error) => fail(socketFailed(error)))
      req.end()
    },
    () => socket.destroy(),
  )
}

function readBody(response: IncomingMessage, maxBytes: number, signal: AbortSignal): Promise<Buffer> {
  const declared = response.headers['content-length']
  if (declared !== undefined && Number(declared) > maxBytes) {
    throw tooLarge('content_length_exceeds_limit', maxBytes)
  }
  return abortable<Buffer>(
    signal,
    (ok, fail) => {
      const chunks: Buffer[] = []
      let size = 0
      response.on('data', (chunk: Buffer) => {
        size += chunk.length
        if (size <= maxBytes) chunks.push(chunk)
        else {
          fail(tooLarge('body_exceeds_limit', maxBytes))
          response.destroy()
        }
      })
      response.once('end', () => {
        if (response.complete) ok(Buffer.concat(chunks))
        else fail(fetchFailed('body_incomplete', 'The document body ended early.'))
      })
      response.once('error', () => fail(fetchFailed('body_incomplete', 'The document body ended early.')))
      response.once('close', () => fail(fetchFailed('body_incomplete', 'The document body ended early.')))
    },
    () => response.destroy(),
  )
}

function followRedirect(current: URL, location: string): URL {
  let next: URL
  try {
    next = new URL(location, current)
  } catch {
    throw fetchFailed('invalid_redirect', 'The document server sent a malformed redirect.')
  }
  if (next.protocol === 'http:')
    throw notAllowed('redirect_to_http', 'The document URL redirects to plain http.')
  try {
    return parseDocumentUrl(next.href)
  } catch (error) {
    if (!isApiError(error) || error.code !== 'invalid_url_request') throw error
    throw new ApiError('url_not_allowed', 'The document URL redirects to a URL that is not allowed.', {
      ...error.details,
      redirect: true,
    })
  }
}
