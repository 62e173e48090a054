import fp from 'fastify-plugin'
import { Histogram, type Registry } from 'prom-client'
import { PREFIX } from './metrics-registry.ts'

/** A request no route matched (a 404, or an error before routing) is counted under this route. */
export const UNMATCHED_ROUTE = 'unmatched'

/**
 * Every answered request's latency, by method, route template (`/api/v1/print-jobs/:print_job_id`, never the
 * requested path: one series per route, however many ids are asked for) and status code. The histogram's
 * `_count` is the number of requests.
 */
export const httpMetricsPlugin = fp<{ registry: Registry }>(
  async (app, { registry }) => {
    const duration = new Histogram({
      name: `${PREFIX}http_request_duration_seconds`,
      help: 'Time from receiving an HTTP request to having sent its answer, by method, route and status code.',
      labelNames: ['method', 'route', 'status_code'] as const,
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers: [registry],
    })
    app.addHook('onResponse', async (request, reply) => {
      duration.observe(
        {
          method: request.method,
          route: request.routeOptions.url ?? UNMATCHED_ROUTE,
          status_code: reply.statusCode,
        },
        reply.elapsedTime / 1000,
      )
    })
  },
  { name: 'http-metrics' },
)
