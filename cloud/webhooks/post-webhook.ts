import type { ClientRequest, IncomingMessage } from 'node:http'
import { type RequestOptions, request } from 'node:https'
import { isApiError } from '../../print-api/api-error.ts'
import { abortable, deadline } from '../fetch/abortable.ts'
import { resolveHostAddresses } from '../fetch/dns-resolver.ts'
import { fetchFailed } from '../fetch/failures.ts'
import { classifyAddress } from '../fetch/ip-policy.ts'
import type { SafeFetchOptions } from '../fetch/safe-fetch.ts'
import { hostAddressLiteral, parseDocumentUrl } from '../fetch/url-policy.ts'
import type { WebhookSignatureHeaders } from './signing.ts'
import type { GuardedConnect, WebhookConnections } from './webhook-connections.ts'

/** What the URL fetcher's seams replace (tests: a resolver, a connector to 127.0.0.1, a test CA). */
export type WebhookFetchSeams = Pick<
  SafeFetchOptions,
  'resolve' | 'connect' | 'tlsCa' | 'dnsServers' | 'dnsTimeoutMs' | 'dnsTries'
>

export interface WebhookPost {
  url: string
  body: string
  headers: WebhookSignatureHeaders
  /** The whole attempt: DNS, connection, TLS, sending the body and the answer's status line and headers. */
  timeoutMs: number
}

/** The endpoint answered (any status), or no answer came and `error` says why, in words for the owner. */
export type WebhookPostResult = { statusCode: number; retryAfter?: string } | { error: string }

export const WEBHOOK_USER_AGENT = 'print-hub-webhooks/1'
const DEFAULT_DNS_TIMEOUT_MS = 2000
const DEFAULT_DNS_TRIES = 2

/** An answer's body is read (and dropped) up to this much to keep the connection; a longer one closes it. */
const KEPT_BODY_BYTES = 64 * 1024

/**
 * POSTs a delivery through the URL fetcher's SSRF guard (cloud/fetch/): the URL policy, every resolved address
 * checked, TLS to exactly the checked address with the host name verified. No redirect is followed (a 3xx is
 * an answer like any other non-2xx). A connection to the same host and port is kept and reused
 * (webhook-connections.ts); a request that meets a kept connection the endpoint has just closed is sent once
 * more, on a new one.
 */
export async function postWebhook(
  post: WebhookPost,
  seams: WebhookFetchSeams,
  connections: WebhookConnections,
): Promise<WebhookPostResult> {
  const first = await postKept(post, seams, connections)
  if ('result' in first) return first.result
  const again = await postKept(post, seams, connections)
  return 'result' in again ? again.result : { error: 'connection reset' }
}

/** One POST on a kept connection; `staleConnection` when a reused one was found closed before any answer. */
async function postKept(
  post: WebhookPost,
  seams: WebhookFetchSeams,
  connections: WebhookConnections,
): Promise<{ result: WebhookPostResult } | { staleConnection: true }> {
  const timeout = deadline(post.timeoutMs, () => fetchFailed('total_timeout', 'timed out'))
  const resolved: string[] = []
  const resolveFrom = seams.resolve ?? defaultResolver(seams, timeout.signal)
  let url: URL
  try {
    url = parseDocumentUrl(post.url)
  } catch (error) {
    timeout.clear()
    return { result: { error: describeFailure(error, post, resolved) } }
  }
  const guarded: GuardedConnect = {
    url,
    resolve: async (hostname) => {
      const addresses = await resolveFrom(hostname)
      resolved.push(...addresses)
      return addresses
    },
    connectTimeoutMs: post.timeoutMs,
    signal: timeout.signal,
  }
  let reused = false
  try {
    const body = Buffer.from(post.body, 'utf8')
    let req: ClientRequest | undefined
    const response = await abortable<IncomingMessage>(
      timeout.signal,
      (ok, fail) => {
        req = request({
          method: 'POST',
          host: url.hostname,
          port: url.port === '' ? 443 : Number(url.port),
          path: `${url.pathname}${url.search}`,
          agent: connections,
          setHost: false,
          headers: {
            Host: url.host,
            'Content-Type': 'application/json',
            'Content-Length': String(body.length),
            'User-Agent': WEBHOOK_USER_AGENT,
            ...post.headers,
          },
          guarded,
        } as RequestOptions)
        const sent = req
        sent.once('socket', () => {
          reused = sent.reusedSocket
        })
        sent.once('response', (res) => {
          // Read to the end (dropped) so that the connection is free for the next request; a long body closes it.
          let bytes = 0
          res.on('data', (chunk: Buffer) => {
            bytes += chunk.length
            if (bytes > KEPT_BODY_BYTES) res.destroy()
          })
          res.on('error', () => {})
          ok(res)
        })
        sent.on('error', fail)
        sent.end(body)
      },
      () => req?.destroy(),
    )
    const retryAfter = response.headers['retry-after']
    return {
      result: { statusCode: response.statusCode ?? 0, ...(retryAfter !== undefined && { retryAfter }) },
    }
  } catch (error) {
    // Node.js's advice (http.ClientRequest, request.reusedSocket): a kept connection the server closed meanwhile
    // fails at once with ECONNRESET; such a request was never taken, and goes again on a new connection.
    const code = (error as NodeJS.ErrnoException)?.code
    if (reused && !timeout.signal.aborted && (code === 'ECONNRESET' || code === 'EPIPE'))
      return { staleConnection: true }
    return { result: { error: describeFailure(error, post, resolved) } }
  } finally {
    timeout.clear()
  }
}

function defaultResolver(seams: WebhookFetchSeams, signal: AbortSignal) {
  return (hostname: string) =>
    resolveHostAddresses(
      hostname,
      {
        timeoutMs: seams.dnsTimeoutMs ?? DEFAULT_DNS_TIMEOUT_MS,
        tries: seams.dnsTries ?? DEFAULT_DNS_TRIES,
        ...(seams.dnsServers && { servers: seams.dnsServers }),
      },
      signal,
    )
}

/** The failure in the words an endpoint's owner reads in its attempts (WebhookAttempt.error). */
function describeFailure(error: unknown, post: WebhookPost, resolved: string[]): string {
  const reason = isApiError(error) ? String(error.details?.reason ?? '') : ''
  const cause = isApiError(error) ? error.details?.cause : (error as NodeJS.ErrnoException)?.code
  if (reason === 'total_timeout' || reason === 'connect_timeout') return `timeout after ${post.timeoutMs} ms`
  if (isApiError(error) && error.code === 'url_not_allowed') return refusedAddress(post.url, resolved, reason)
  if (isApiError(error) && error.code === 'invalid_url_request') return `invalid URL: ${error.message}`
  if (cause === 'ECONNREFUSED') return 'connection refused'
  if (cause === 'ECONNRESET') return 'connection reset'
  if (reason === 'tls_error' && isApiError(error)) return `TLS error: ${String(error.details?.tls_error)}`
  if (reason === 'dns_lookup_failed') return `DNS lookup failed${cause ? ` (${String(cause)})` : ''}`
  if (reason === 'connection_failed') return `connection failed${cause ? ` (${String(cause)})` : ''}`
  if (typeof cause === 'string' && cause.startsWith('HPE_')) return 'invalid HTTP response'
  return error instanceof Error ? error.message : String(error)
}

/** "address refused: 127.0.0.1 is loopback": the first address the policy refused, and why. */
function refusedAddress(url: string, resolved: string[], reason: string): string {
  if (reason === 'local_hostname') return `address refused: ${new URL(url).hostname} is a local host name`
  let literal: string | null = null
  try {
    literal = hostAddressLiteral(new URL(url))
  } catch {}
  for (const address of literal === null ? resolved : [literal]) {
    const verdict = classifyAddress(address)
    if (!verdict.public)
      return `address refused: ${address} is ${verdict.reason.replace(/_address$/, '').replaceAll('_', ' ')}`
  }
  return `address refused: ${reason.replaceAll('_', ' ')}`
}
