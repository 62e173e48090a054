import { createHash } from 'node:crypto'
import type { FastifyRequest } from 'fastify'

/** Sorted-key JSON, so that the same request sent with its fields in another order has the same fingerprint. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : 1))
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(',')}}`
  }
  return JSON.stringify(value) ?? 'null'
}

export function requestFingerprint(request: FastifyRequest): string {
  // Path parameters are part of the request (the same body sent to two accounts is two requests); a route
  // without any keeps the fingerprint it always had.
  const params = request.params as Record<string, unknown> | undefined
  const where = params && Object.keys(params).length > 0 ? ` ${canonical(params)}` : ''
  return createHash('sha256')
    .update(`${request.method} ${request.routeOptions.url}${where}\n${canonical(request.body ?? null)}`)
    .digest('hex')
}
