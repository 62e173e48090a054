import type { FastifyPluginAsync } from 'fastify'
import { ApiError } from '../../print-api/api-error.ts'
import { sendError } from '../../print-api/error-handler.ts'

/** What this node needs to serve, by name (`database`, `broker`): each answers whether it is ready now. */
export type ReadinessChecks = Record<string, () => boolean | Promise<boolean>>

/**
 * Probes for load balancers and systemd, outside the spec's API (not in /openapi.json): no credentials, no
 * quota, and no request lines (a probe every few seconds would drown the log). `GET /healthz` answers while
 * the process serves; `GET /readyz` answers 503 `not_ready` naming what is not ready, and the node logs once
 * when it stops being ready and once when it is ready again. `degraded` names what the node serves without
 * (`redis`: quotas fail open): readyz stays 200 and lists it, since every node would be taken out of service
 * together over it.
 */
export const healthRoutes: FastifyPluginAsync<{
  checks: ReadinessChecks
  degraded?: ReadinessChecks
}> = async (app, { checks, degraded = {} }) => {
  const probe = { config: { unmetered: true }, logLevel: 'warn' as const, schema: { hide: true } }
  let notReadyBefore: string[] = []
  const failing = async (named: ReadinessChecks) =>
    (await Promise.all(Object.entries(named).map(async ([name, ready]) => ({ name, ready: await ready() }))))
      .filter((answer) => !answer.ready)
      .map((answer) => answer.name)

  app.get('/healthz', probe, async () => ({ status: 'ok' }))

  app.get('/readyz', probe, async (_request, reply) => {
    const notReady = await failing(checks)
    if (notReady.join() !== notReadyBefore.join()) {
      if (notReady.length > 0) app.log.warn({ not_ready: notReady }, 'not ready')
      else app.log.info('ready again')
      notReadyBefore = notReady
    }
    if (notReady.length > 0)
      return sendError(
        reply,
        new ApiError('not_ready', `Not ready: ${notReady.join(', ')}.`, { not_ready: notReady }),
      )
    const without = await failing(degraded)
    return without.length === 0 ? { status: 'ok' } : { status: 'degraded', degraded: without }
  })
}
