import { Agent, type RequestOptions } from 'node:https'
import type { Duplex } from 'node:stream'
import type { TLSSocket } from 'node:tls'
import { openConnection } from '../fetch/connect.ts'
import type { WebhookFetchSeams } from './post-webhook.ts'

/** What one request tells the connection it may open: the URL, its resolver and how long connecting may take. */
export interface GuardedConnect {
  url: URL
  resolve: (hostname: string) => Promise<string[]>
  connectTimeoutMs: number
  signal: AbortSignal
}

/**
 * Keep-alive connections to webhook endpoints, opened only through the URL fetcher's SSRF guard (cloud/fetch/
 * connect.ts: every resolved address checked, TLS to exactly the checked address with the host name verified).
 * A connection is reused for the same host and port only, so it always leads to an address the guard accepted
 * for that host; DNS changes meanwhile concern new connections alone. An idle connection is closed after
 * FREE_SOCKET_MS, under the 5 s a Node.js server keeps an idle connection by default (`keepAliveTimeout`), so
 * that a reused one has seldom been closed by the other end (a request that meets one anyway is sent again on
 * a new connection: post-webhook.ts). As many connections to one host are kept as the worker makes attempts at
 * once (`keptPerHost`): several endpoints on one host (a backend's endpoint per event kind) each take up to
 * `perEndpoint` at once, and a connection closed after each attempt costs a TLS handshake for the next.
 */
export class WebhookConnections extends Agent {
  static readonly FREE_SOCKET_MS = 4000
  readonly #seams: WebhookFetchSeams

  constructor(seams: WebhookFetchSeams = {}, keptPerHost = 8) {
    super({
      keepAlive: true,
      maxFreeSockets: keptPerHost,
      timeout: WebhookConnections.FREE_SOCKET_MS,
      scheduling: 'lifo',
    })
    this.#seams = seams
  }

  /** http.Agent calls this for a new connection; the callback form lets it be opened asynchronously. */
  override createConnection(
    options: RequestOptions,
    callback?: (error: Error | null, socket: Duplex) => void,
  ): Duplex {
    const guarded = (options as RequestOptions & { guarded?: GuardedConnect }).guarded
    if (!guarded || !callback) throw new Error('a webhook connection is opened only with its guard')
    openConnection(
      guarded.url,
      { ...this.#seams, resolve: guarded.resolve, connectTimeoutMs: guarded.connectTimeoutMs },
      guarded.signal,
    ).then(
      (socket: TLSSocket) => {
        // Headers and body go out in one write; without this, Nagle's algorithm holds the body for the
        // server's delayed ACK (about 40 ms on Linux).
        socket.setNoDelay(true)
        callback(null, socket)
      },
      (error: unknown) => callback(error as Error, undefined as unknown as Duplex),
    )
    return undefined as unknown as Duplex
  }
}
