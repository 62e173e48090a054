import type { IncomingHttpHeaders, ServerResponse } from 'node:http'
import { checkServerIdentity, createSecureContext, connect as tlsConnect } from 'node:tls'
import { Webhook } from 'standardwebhooks'
import type { ConnectTarget } from '../../../cloud/fetch/safe-fetch.ts'
import type { WebhookFetchSeams } from '../../../cloud/webhooks/post-webhook.ts'
import type { WebhookEvent } from '../../../protocol/webhooks.ts'
import { makeCertificate, startHttpsServer } from '../fetch/tls-fixture.ts'

export const RECEIVER_HOST = 'hooks.example.com'

/** Where the receiver listens on 127.0.0.1, and the certificate it presents (PEM). */
export interface ReceiverReach {
  port: number
  certificate: string
}

/** The fetcher's seams to a receiver: its name resolves to a public address, and the connection goes to it. */
export function receiverSeams({ port, certificate }: ReceiverReach): WebhookFetchSeams {
  // One context trusting the test certificate, made once: connectTls's `ca` option builds one per connection
  // from every root certificate, about 17 ms each, which would swamp the figures of the benchmark.
  const trusting = createSecureContext({ ca: certificate })
  return {
    resolve: async (host: string) =>
      host === RECEIVER_HOST
        ? [RECEIVER_PUBLIC_ADDRESS]
        : Promise.reject(Object.assign(new Error('nx'), { code: 'ENOTFOUND' })),
    connect: (target: ConnectTarget) =>
      tlsConnect({
        host: '127.0.0.1',
        port,
        servername: target.servername,
        secureContext: trusting,
        checkServerIdentity: (_host, cert) => checkServerIdentity(target.servername, cert),
        rejectUnauthorized: true,
      }),
  }
}
/** A public address the test DNS gives the receiver's name; the connection goes to 127.0.0.1 instead. */
const RECEIVER_PUBLIC_ADDRESS = '93.184.215.14'

export interface ReceivedDelivery {
  path: string
  headers: IncomingHttpHeaders
  body: string
  /** The body as the standardwebhooks library verified and parsed it with the receiver's secret. */
  event: WebhookEvent
  atMs: number
}

export interface WebhookReceiver {
  url(path: string): string
  /** Verified deliveries, in arrival order. */
  received: ReceivedDelivery[]
  /** Requests whose signature the library refused. */
  refused: number
  /** The fetcher's seams that reach this receiver: its name resolves to a public address, connected to here. */
  fetchSeams: WebhookFetchSeams
  /** What another process needs to make the same seams (receiverSeams). */
  reach: ReceiverReach
  close(): Promise<void>
}

/**
 * A real HTTPS receiver on 127.0.0.1 (a self-signed certificate for RECEIVER_HOST) that verifies each
 * delivery with the standardwebhooks library and `secret()`, as a customer's backend does, then answers
 * with `answer` (204 by default).
 */
export async function startWebhookReceiver(
  secret: () => string,
  answer: (delivery: ReceivedDelivery, res: ServerResponse) => void = (_, res) => res.writeHead(204).end(),
): Promise<WebhookReceiver> {
  const certificate = makeCertificate(RECEIVER_HOST, [RECEIVER_HOST])
  const received: ReceivedDelivery[] = []
  const receiver = { received, refused: 0 }
  const server = await startHttpsServer(certificate, (req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8')
      let event: WebhookEvent
      try {
        event = new Webhook(secret()).verify(body, req.headers as Record<string, string>) as WebhookEvent
      } catch {
        receiver.refused += 1
        res.writeHead(401).end()
        return
      }
      const delivery = { path: req.url ?? '', headers: req.headers, body, event, atMs: Date.now() }
      received.push(delivery)
      answer(delivery, res)
    })
  })
  const reach = { port: server.port, certificate: String(certificate.cert) }
  return Object.assign(receiver, {
    url: (path: string) => `https://${RECEIVER_HOST}${path}`,
    fetchSeams: receiverSeams(reach),
    reach,
    close: server.close,
  })
}
