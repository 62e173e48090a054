import type { FastifyPluginAsync } from 'fastify'
import { ApiError } from '../errors.ts'
import { sendError } from '../plugins/error-handler.ts'

/** What this node needs to serve, by name (`database`, `broker`): each answers whether it is ready now. */
export type ReadinessChecks = Record<string, () => boolean | Promise<boolean>>

/**
 * Probes for load balancers and systemd, outside the spec's API (not in /openapi.json): no credentials, no
 * quota, and no request lines (a probe every few seconds would drown the log). `GET /healthz` answers while
 * the process serves; `GET /readyz` answers 503 `not_ready` naming what is not ready, and the node logs once
 * when it stops being ready and once when it is ready again.
 */
export const healthRoutes: FastifyPluginAsync<{ checks: ReadinessChecks }> = async (app, { checks }) => {
  const probe = { config: { unmetered: true }, logLevel: 'warn' as const, schema: { hide: true } }
  let notReadyBefore: string[] = []

  app.get('/healthz', probe, async () => ({ status: 'ok' }))

  app.get('/readyz', probe, async (_request, reply) => {
    const answers = await Promise.all(
      Object.entries(checks).map(async ([name, ready]) => ({ name, ready: await ready() })),
    )
    const notReady = answers.filter((answer) => !answer.ready).map((answer) => answer.name)
    if (notReady.join() !== notReadyBefore.join()) {
      if (notReady.length > 0) app.log.warn({ not_ready: notReady }, 'not ready')
      else app.log.info('ready again')
      notReadyBefore = notReady
    }
    if (notReady.length === 0) return { status: 'ok' }
    return sendError(
      reply,
      new ApiError('not_ready', `Not ready: ${notReady.join(', ')}.`, { not_ready: notReady }),
    )
  })
}
