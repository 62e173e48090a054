import { randomUUID } from 'node:crypto'
import type { IncomingMessage } from 'node:http'
import fp from 'fastify-plugin'

/** A caller's X-Request-Id is echoed when it is at most 128 safe characters (spec: Limits); else one is made. */
const SAFE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/

export function requestIdFor(req: IncomingMessage): string {
  const given = req.headers['x-request-id']
  return typeof given === 'string' && SAFE_REQUEST_ID.test(given) ? given : randomUUID()
}

/** Puts X-Request-Id on every response, errors and unknown routes included (pass `requestIdFor` as genReqId). */
export const requestIdPlugin = fp(
  async (app) => {
    app.addHook('onRequest', async (request, reply) => {
      reply.header('x-request-id', request.id)
    })
  },
  { name: 'request-id' },
)
