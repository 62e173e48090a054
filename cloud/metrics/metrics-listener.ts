import { createServer } from 'node:http'
import type { Logger } from 'pino'
import type { Registry } from 'prom-client'

export interface MetricsListener {
  /** The port bound (the one asked for, or the one the OS picked for 0). */
  port: number
  close(): Promise<void>
}

/**
 * Serves `GET /metrics` (Prometheus' text format) on a listener of its own, apart from the API's port: bound to
 * a private address, it shows the cloud's internals to the scraper only, and asks it for no credential.
 * Anything else is a 404.
 */
export async function startMetricsListener(options: {
  host: string
  port: number
  registry: Registry
  logger: Logger
}): Promise<MetricsListener> {
  const { registry, logger } = options
  const server = createServer((request, response) => {
    const path = (request.url ?? '').split('?')[0]
    if (path !== '/metrics' || (request.method !== 'GET' && request.method !== 'HEAD')) {
      response.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n')
      return
    }
    registry.metrics().then(
      (text) => {
        response.writeHead(200, { 'content-type': registry.contentType })
        response.end(request.method === 'HEAD' ? undefined : text)
      },
      (error: unknown) => {
        logger.error({ err: error }, 'metrics collection failed')
        response.writeHead(500, { 'content-type': 'text/plain' }).end('metrics collection failed\n')
      },
    )
  })
  await new Promise<void>((resolve, reject) => {
    const refuse = (error: NodeJS.ErrnoException) =>
      reject(new Error(`METRICS_PORT: cannot listen on ${options.host}:${options.port} (${error.code})`))
    server.once('error', refuse)
    server.listen({ host: options.host, port: options.port }, () => {
      server.off('error', refuse)
      resolve()
    })
  })
  const address = server.address()
  return {
    port: typeof address === 'object' && address ? address.port : options.port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve())
        server.closeAllConnections()
      }),
  }
}
