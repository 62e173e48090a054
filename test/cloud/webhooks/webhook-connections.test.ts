import type { IncomingMessage, ServerResponse } from 'node:http'
import { checkServerIdentity, connect as tlsConnect } from 'node:tls'
import { afterEach, describe, expect, it } from 'vitest'
import type { ConnectTarget } from '../../../cloud/fetch/safe-fetch.ts'
import { postWebhook, type WebhookFetchSeams } from '../../../cloud/webhooks/post-webhook.ts'
import { WebhookConnections } from '../../../cloud/webhooks/webhook-connections.ts'
import { makeCertificate, startHttpsServer, type TestServer } from '../fetch/tls-fixture.ts'

const HOST = 'hooks.example.com'
const HEADERS = { 'webhook-id': 'id', 'webhook-timestamp': '1', 'webhook-signature': 'v1,x' }
const post = (path = '/hook') => ({
  url: `https://${HOST}${path}`,
  body: '{}',
  headers: HEADERS,
  timeoutMs: 5000,
})

describe('kept connections to a webhook endpoint', () => {
  let server: TestServer | undefined
  let connections: WebhookConnections | undefined
  afterEach(async () => {
    connections?.destroy()
    await server?.close()
    server = connections = undefined
  })

  /** An HTTPS endpoint on 127.0.0.1 for HOST, counting the TLS connections made to it and the requests on each. */
  async function endpoint(
    handler: (req: IncomingMessage, res: ServerResponse, nth: number) => void,
    keptPerHost?: number,
  ) {
    const certificate = makeCertificate(HOST, [HOST])
    const perConnection = new WeakMap<object, number>()
    const counts = { connections: 0, requests: 0, resolved: 0 }
    server = await startHttpsServer(certificate, (req, res) => {
      const nth = (perConnection.get(req.socket) ?? 0) + 1
      perConnection.set(req.socket, nth)
      counts.requests += 1
      req.resume()
      req.on('end', () => handler(req, res, nth))
    })
    server.server.on('secureConnection', () => {
      counts.connections += 1
    })
    const port = server.port
    const seams: WebhookFetchSeams = {
      resolve: async () => {
        counts.resolved += 1
        return ['93.184.215.14']
      },
      connect: (target: ConnectTarget) =>
        tlsConnect({
          host: '127.0.0.1',
          port,
          servername: target.servername,
          ca: certificate.cert,
          checkServerIdentity: (_host, cert) => checkServerIdentity(target.servername, cert),
        }),
    }
    connections = new WebhookConnections(seams, keptPerHost)
    return { counts, seams, connections }
  }

  it('sends one delivery after another on one connection, opened through the guard once', async () => {
    const { counts, seams, connections } = await endpoint((_req, res) => res.writeHead(204).end())
    for (let i = 0; i < 10; i++)
      expect(await postWebhook(post(`/hook/${i}`), seams, connections)).toStrictEqual({ statusCode: 204 })
    expect(counts).toStrictEqual({ connections: 1, requests: 10, resolved: 1 })
  })

  it('keeps as many connections to one host as attempts go at once, so the next round opens none', async () => {
    const { counts, seams, connections } = await endpoint((_req, res) => res.writeHead(204).end(), 24)
    // Three endpoints on one host, 8 attempts each at once: 24 connections, all kept for the next round.
    const round = () =>
      Promise.all(
        Array.from({ length: 24 }, (_, i) => postWebhook(post(`/hook/${i % 3}`), seams, connections)),
      )
    await round()
    expect(counts.connections).toBe(24)
    expect(await round()).toStrictEqual(Array.from({ length: 24 }, () => ({ statusCode: 204 })))
    expect(counts).toMatchObject({ connections: 24, requests: 48 })
  })

  it('reads a long answer to its end only up to a bound, then opens a new connection', async () => {
    const { counts, seams, connections } = await endpoint((_req, res) =>
      res.writeHead(200, { 'content-type': 'text/plain' }).end('x'.repeat(200 * 1024)),
    )
    expect(await postWebhook(post(), seams, connections)).toStrictEqual({ statusCode: 200 })
    expect(await postWebhook(post(), seams, connections)).toStrictEqual({ statusCode: 200 })
    expect(counts.connections).toBe(2)
  })

  it('sends a delivery again on a new connection when the kept one was closed under it, and only then', async () => {
    // The endpoint drops every connection at its second request without answering: what a kept connection the
    // server timed out looks like to the client.
    const { counts, seams, connections } = await endpoint((req, res, nth) => {
      if (nth === 2) req.socket.destroy()
      else res.writeHead(204).end()
    })
    expect(await postWebhook(post(), seams, connections)).toStrictEqual({ statusCode: 204 })
    expect(await postWebhook(post(), seams, connections)).toStrictEqual({ statusCode: 204 })
    expect(counts).toMatchObject({ connections: 2, requests: 3 })
  })

  it('does not send again when a new connection fails: that is the attempt’s failure', async () => {
    const { counts, seams, connections } = await endpoint((req) => req.socket.destroy())
    expect(await postWebhook(post(), seams, connections)).toStrictEqual({ error: 'connection reset' })
    expect(counts).toMatchObject({ connections: 1, requests: 1 })
  })

  it('still refuses an address the guard refuses', async () => {
    const { connections } = await endpoint((_req, res) => res.writeHead(204).end())
    const result = await postWebhook(post(), { resolve: async () => ['127.0.0.1'] }, connections)
    expect(result).toStrictEqual({ error: 'address refused: 127.0.0.1 is loopback' })
  })
})
