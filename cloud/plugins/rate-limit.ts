import rateLimit from '@fastify/rate-limit'
import type { FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { ApiError } from '../errors.ts'

export interface RateLimitQuotas {
  windowSeconds: number
  perIp: number
  perAccount: number
  tokenFailureWindowSeconds: number
  tokenFailuresPerIp: number
  tokenFailuresPerClient: number
}

type Limiter = ReturnType<import('fastify').FastifyInstance['createRateLimit']>
type LimitResult = Awaited<ReturnType<Limiter>>

export interface TokenFailureGuard {
  /** Refuses (429) when the address or the client has failed too often in the window. Counts nothing. */
  check(request: FastifyRequest, clientId: string | null): Promise<void>
  /** Counts one failed attempt against the address and the client. */
  record(request: FastifyRequest, clientId: string | null): Promise<void>
}

declare module 'fastify' {
  interface FastifyInstance {
    tokenFailures: TokenFailureGuard
  }
  interface FastifyRequest {
    tokenClientId: string | null
  }
}

/** Spec (Errors): a 429 carries Retry-After, X-RateLimit-Limit, -Remaining, -Reset (Unix time) and -Scope. */
function quotaHeaders(result: Extract<LimitResult, { isAllowed: false }>, remaining: number) {
  return {
    'x-ratelimit-limit': String(result.max),
    'x-ratelimit-remaining': String(remaining),
    'x-ratelimit-reset': String(Math.ceil((Date.now() + result.ttl) / 1000)),
  }
}

function exceeded(result: Extract<LimitResult, { isAllowed: false }>, scope: string): ApiError {
  const retryAfter = Math.max(1, result.ttlInSeconds)
  return new ApiError(
    'rate_limited',
    `Too many requests for this ${scope}; retry in ${retryAfter} s.`,
    { scope, limit: result.max, retry_after_seconds: retryAfter },
    { ...quotaHeaders(result, 0), 'retry-after': String(retryAfter), 'x-ratelimit-scope': scope },
  )
}

async function enforce(limiter: Limiter, request: FastifyRequest, reply: FastifyReply, scope: string) {
  const result = await limiter(request)
  if (result.isAllowed) return
  if (result.isExceeded) throw exceeded(result, scope)
  reply.headers({ ...quotaHeaders(result, result.remaining), 'x-ratelimit-scope': scope })
}

/**
 * Quotas on every endpoint, counted by @fastify/rate-limit's store (in memory here; its Redis store for a
 * cluster): per client address on every request, per account on authenticated routes, and failed token
 * requests per address and per client.
 */
export const rateLimitPlugin = fp<{ quotas: RateLimitQuotas }>(
  async (app, { quotas }) => {
    await app.register(rateLimit, { global: false })
    const window = quotas.windowSeconds * 1000
    const byIp = app.createRateLimit({
      max: quotas.perIp,
      timeWindow: window,
      keyGenerator: (r) => `ip:${r.ip}`,
    })
    const byAccount = app.createRateLimit({
      max: quotas.perAccount,
      timeWindow: window,
      keyGenerator: (r) => `account:${r.auth?.accountId}`,
    })
    const failureWindow = quotas.tokenFailureWindowSeconds * 1000
    const failuresByIp = app.createRateLimit({
      max: quotas.tokenFailuresPerIp,
      timeWindow: failureWindow,
      keyGenerator: (r) => `token-failures-ip:${r.ip}`,
    })
    const failuresByClient = app.createRateLimit({
      max: quotas.tokenFailuresPerClient,
      timeWindow: failureWindow,
      keyGenerator: (r) => `token-failures-client:${r.tokenClientId}`,
    })

    app.decorateRequest('tokenClientId', null)
    app.addHook('onRequest', async (request, reply) => enforce(byIp, request, reply, 'ip'))
    app.addHook('preParsing', async (request, reply) => {
      if (request.auth) await enforce(byAccount, request, reply, 'account')
    })

    const peek = async (limiter: Limiter, request: FastifyRequest, scope: string) => {
      const result = await limiter(request, { increment: false })
      if (!result.isAllowed && result.remaining === 0) throw exceeded(result, scope)
    }
    app.decorate('tokenFailures', {
      async check(request, clientId) {
        request.tokenClientId = clientId
        await peek(failuresByIp, request, 'ip')
        if (clientId !== null) await peek(failuresByClient, request, 'client')
      },
      async record(request, clientId) {
        request.tokenClientId = clientId
        await failuresByIp(request)
        if (clientId !== null) await failuresByClient(request)
      },
    } satisfies TokenFailureGuard)
  },
  { name: 'rate-limit', dependencies: ['request-id'] },
)
