import { Transform } from 'node:stream'
import type { FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { ApiError } from '../../print-api/api-error.ts'

declare module 'fastify' {
  interface FastifyInstance {
    /** Request body bytes counted against MAX_BODY_BYTES_IN_FLIGHT now. */
    bodyBytesInFlight(): number
  }
}

export interface BodyBudgetOptions {
  /** MAX_BODY_BYTES_IN_FLIGHT: request body bytes the service takes at once, across all requests. */
  maxBytesInFlight: number
  /** What a multipart body of unknown length counts as (its parser reads the request itself). */
  multipartReserveBytes: number
}

/** Bodies up to this size are counted but never refused: small API calls go on while uploads wait. */
export const SMALL_BODY_BYTES = 64 * 1024
/** Seconds a refused client waits: large bodies in flight take a few seconds to arrive and be handled. */
const RETRY_AFTER_SECONDS = 2

function busy(): ApiError {
  return new ApiError(
    'request_bodies_busy',
    'The service is receiving too much at once; retry after the Retry-After delay.',
    undefined,
    // The body is not read: close the connection rather than drain it.
    { 'retry-after': String(RETRY_AFTER_SECONDS), connection: 'close' },
  )
}

/** RFC 9112 §6.3: Content-Length decides the length unless Transfer-Encoding is present. */
function declaredLength(request: FastifyRequest): number | null {
  if (request.headers['transfer-encoding'] !== undefined) return null
  const header = request.headers['content-length']
  return header !== undefined && /^\d+$/.test(header) ? Number(header) : null
}

/**
 * A global cap on the request body bytes being received and handled at once, so that many large uploads
 * cannot together exhaust memory. A body's bytes count from the moment it is admitted until its answer is
 * sent (the handler holds them, decoded, until then):
 * - with Content-Length, the declared size is counted up front, and a large body that would pass the cap is
 *   answered 503 request_bodies_busy with Retry-After before it is read;
 * - chunked bodies are counted as they arrive and refused when they pass the cap (a chunked multipart
 *   upload, read by its parser straight from the request, counts as `multipartReserveBytes` up front).
 * A request is never refused while it is the only one in flight, so a lone body up to its route's limit
 * always gets through.
 */
export const bodyBudgetPlugin = fp<BodyBudgetOptions>(
  async (app, { maxBytesInFlight, multipartReserveBytes }) => {
    let inFlight = 0
    const counted = new WeakMap<FastifyRequest, { bytes: number; streaming: boolean }>()

    app.decorate('bodyBytesInFlight', () => inFlight)
    const admits = (own: number, more: number) => inFlight === own || inFlight + more <= maxBytesInFlight

    const release = (request: FastifyRequest) => {
      const entry = counted.get(request)
      if (entry === undefined) return
      counted.delete(request)
      inFlight -= entry.bytes
    }

    app.addHook('onRequest', async (request, reply) => {
      const length = declaredLength(request)
      const multipart = request.headers['content-type']?.toLowerCase().startsWith('multipart/') === true
      let bytes: number
      if (length !== null) bytes = length
      else if (request.headers['transfer-encoding'] === undefined)
        return // no body
      else bytes = multipart ? multipartReserveBytes : 0
      if (bytes > SMALL_BODY_BYTES && !admits(0, bytes)) throw busy()
      inFlight += bytes
      counted.set(request, { bytes, streaming: length === null && !multipart })
      // 'close' comes whatever happens to the answer (sent, or the connection lost); the hooks below are
      // the same release, earlier.
      reply.raw.once('close', () => release(request))
    })

    app.addHook('preParsing', async (request, _reply, payload) => {
      const entry = counted.get(request)
      if (!entry?.streaming) return payload
      const counter = new Transform({
        transform(chunk: Buffer, _encoding, callback) {
          if (entry.bytes + chunk.length > SMALL_BODY_BYTES && !admits(entry.bytes, chunk.length)) {
            callback(busy())
            return
          }
          entry.bytes += chunk.length
          inFlight += chunk.length
          callback(null, chunk)
        },
      })
      return payload.pipe(counter)
    })

    app.addHook('onResponse', async (request) => release(request))
    app.addHook('onRequestAbort', async (request) => release(request))
  },
  { name: 'body-budget', dependencies: ['error-handler'] },
)
