import { setTimeout as sleep } from 'node:timers/promises'
import type { FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { ApiError } from '../../print-api/api-error.ts'
import { requestFingerprint } from '../../print-api/request-fingerprint.ts'
import { idempotencyKeyDigest, seal, unseal } from '../partner/sealed-replay.ts'
import type { IdempotencyScope } from '../storage/idempotency.ts'
import type { Storage } from '../storage/storage.ts'
import { applicationOf, authOf } from './authentication.ts'

/**
 * The partner API's required Idempotency-Key (spec: Partner management): keys are the calling application's,
 * stored as digests, and answers are kept sealed (cloud/partner/sealed-replay.ts). `replayStatus` replaces
 * the first answer's status on a replay (an account's 201 is replayed as 200).
 */
export interface ApplicationIdempotency {
  by: 'application'
  replayStatus?: number
}

/**
 * An account's Idempotency-Key on an endpoint whose answer holds a secret (a webhook endpoint's signing
 * secret): keyed by digest and sealed as the partner API's are, so the idempotency table holds no secret.
 */
export interface SealedAccountIdempotency {
  by: 'account'
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * The route honours the Idempotency-Key header: `true` for the print-job create endpoints (keys scoped to
     * the account), per application for the partner API, or per account with the answer sealed.
     */
    idempotent?: boolean | ApplicationIdempotency | SealedAccountIdempotency
  }
  interface FastifyRequest {
    idempotencyScope: IdempotencyScope | null
    /** The request's fingerprint under its key (requestFingerprint), offered to the hub with a print job. */
    idempotencyFingerprint: string | null
    /** Stops renewing the claim of this request's key. */
    idempotencyHold: (() => void) | null
    idempotencySealing: Claim['sealing']
  }
}

export interface IdempotencyOptions {
  storage: Storage
  ttlHours: number
  /**
   * How long a claim protects an unfinished request before another node may take it over. The request holding
   * it renews it every third of that while it runs, so only a holder that died loses its claim, and soon.
   */
  lockMs?: number
  /** How long a concurrent duplicate waits for the first request to finish before answering 409. */
  waitMs?: number
}

interface Claim {
  scope: IdempotencyScope
  /** Set for the partner API: the raw key (never stored) and the owner that seal the kept answer. */
  sealing: { key: string; owner: string; replayStatus: number | undefined } | null
}

/** The claim's scope and sealing for this request, or null when the route or request has no key. */
function claimFor(request: FastifyRequest): Claim | null {
  const config = request.routeOptions.config.idempotent
  const key = request.headers['idempotency-key']
  if (!config || typeof key !== 'string') return null
  const endpoint = request.routeOptions.url ?? ''
  if (config === true)
    return { scope: { accountId: authOf(request).accountId, endpoint, key }, sealing: null }
  if (config.by === 'account') {
    const accountId = authOf(request).accountId
    return {
      scope: { accountId, endpoint, key: idempotencyKeyDigest(key) },
      sealing: { key, owner: `account:${accountId}`, replayStatus: undefined },
    }
  }
  const owner = `application:${applicationOf(request).app_id}`
  return {
    scope: { accountId: owner, endpoint, key: idempotencyKeyDigest(key) },
    sealing: { key, owner, replayStatus: config.replayStatus },
  }
}

/**
 * Records the answer to the request's key through `tx`, the transaction that creates what it answers, so that
 * a retry after the node died before answering replays it (sealed for the partner API). The answer sent is
 * recorded again as it goes out.
 */
export async function recordAnswerWithin(
  tx: Storage,
  request: FastifyRequest,
  statusCode: number,
  body: unknown,
): Promise<void> {
  const scope = request.idempotencyScope
  if (!scope) return
  const text = JSON.stringify(body)
  const sealing = request.idempotencySealing
  await tx.idempotency.complete(scope, statusCode, sealing ? seal(text, sealing.key, sealing.owner) : text)
}

/**
 * Idempotency-Key (spec: print jobs; the partner API's, see ApplicationIdempotency): keys are scoped to the
 * account (or application) and endpoint and kept in storage for at
 * least `ttlHours`. The first request claims the key; a retry of the same request gets the original status
 * and body; the same key on a different request is a 409; a concurrent duplicate waits for the first to
 * finish and then gets its answer. Only successful answers are kept: after a failure the key is released,
 * so a corrected retry runs again (nothing was created by the failed attempt).
 */
export const idempotencyPlugin = fp<IdempotencyOptions>(
  async (app, { storage, ttlHours, lockMs = 15_000, waitMs = 60_000 }) => {
    const ttlMs = ttlHours * 3600_000
    app.decorateRequest('idempotencyScope', null)
    app.decorateRequest('idempotencyFingerprint', null)
    app.decorateRequest('idempotencySealing', null)
    app.decorateRequest('idempotencyHold', null)
    const holds = new Set<NodeJS.Timeout>()
    const hold = (scope: IdempotencyScope) => {
      const timer = setInterval(() => {
        storage.idempotency.renew(scope, Date.now() + lockMs).catch(() => {
          // A busy database: the next renewal tries again before the claim runs out.
        })
      }, lockMs / 3)
      timer.unref()
      holds.add(timer)
      return () => {
        clearInterval(timer)
        holds.delete(timer)
      }
    }
    app.addHook('onClose', async () => {
      for (const timer of holds) clearInterval(timer)
      holds.clear()
    })

    app.addHook('preHandler', async (request: FastifyRequest, reply: FastifyReply) => {
      const claim = claimFor(request)
      if (!claim) return
      const { scope, sealing } = claim
      const fingerprint = requestFingerprint(request)
      const deadline = Date.now() + waitMs
      for (let delay = 5; ; delay = Math.min(delay * 2, 200)) {
        const state = await storage.idempotency.begin(scope, fingerprint, Date.now(), lockMs, ttlMs)
        switch (state.outcome) {
          case 'started':
            request.idempotencyScope = scope
            request.idempotencyFingerprint = fingerprint
            request.idempotencySealing = sealing
            request.idempotencyHold = hold(scope)
            return
          case 'conflict':
            throw new ApiError(
              'idempotency_key_conflict',
              'This Idempotency-Key was already used with a different request.',
            )
          case 'completed': {
            const body = sealing ? unseal(state.body, sealing.key, sealing.owner) : state.body
            // A digest collision, or a record sealed otherwise: never another request's answer.
            if (body === null) {
              throw new ApiError(
                'idempotency_key_conflict',
                'This Idempotency-Key was already used with a different request.',
              )
            }
            // A sealed answer holds secrets (cloud/partner/sealed-replay.ts): no cache may keep its replay.
            if (sealing) reply.header('cache-control', 'private, no-store')
            return reply
              .code(sealing?.replayStatus ?? state.statusCode)
              .header('idempotent-replayed', 'true')
              .type('application/json; charset=utf-8')
              .send(body)
          }
        }
        if (Date.now() >= deadline) {
          throw new ApiError(
            'idempotency_request_in_progress',
            'A request with this Idempotency-Key is still being processed.',
            undefined,
            { 'retry-after': '1' },
          )
        }
        await sleep(delay)
      }
    })

    app.addHook('onSend', async (request, reply, payload) => {
      request.idempotencyHold?.()
      request.idempotencyHold = null
      const scope = request.idempotencyScope
      if (!scope) return payload
      request.idempotencyScope = null
      const sealing = request.idempotencySealing
      if (reply.statusCode >= 200 && reply.statusCode < 300 && typeof payload === 'string') {
        const kept = sealing ? seal(payload, sealing.key, sealing.owner) : payload
        await storage.idempotency.complete(scope, reply.statusCode, kept)
      } else {
        await storage.idempotency.release(scope)
      }
      return payload
    })

    app.addHook('onResponse', async (request) => {
      request.idempotencyHold?.()
      request.idempotencyHold = null
      if (request.idempotencyScope) await storage.idempotency.release(request.idempotencyScope)
    })
  },
  { name: 'idempotency', dependencies: ['authentication'] },
)
