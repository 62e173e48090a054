import rateLimit from '@fastify/rate-limit'
import type { FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { ApiError } from '../errors.ts'
import { quotaAddress } from './quota-address.ts'

export interface RateLimitQuotas {
  windowSeconds: number
  perIp: number
  perAccount: number
  perHub: number
  tokenFailureWindowSeconds: number
  tokenFailuresPerIp: number
  tokenFailuresPerClient: number
}

type Limiter = ReturnType<import('fastify').FastifyInstance['createRateLimit']>
type LimitResult = Awaited<ReturnType<Limiter>>

/**
 * Failed credential attempts (RFC 6749 §10.10: guessing). A client id is not a secret (RFC 6749 §2.2), so
 * failures never count against a client alone: anyone could lock it out. They count against the address
 * (grouped as in quota-address.ts), and against the client at that address.
 */
export interface TokenFailureGuard {
  /** Refuses (429, scope ip) when this address has failed too often in the window. Counts nothing. */
  check(request: FastifyRequest): Promise<void>
  /**
   * Counts one failed attempt against the address and, given a client id, against that client at this
   * address; refuses (429, scope client) once the client has failed too often from this address.
   */
  record(request: FastifyRequest, clientId: string | null): Promise<void>
}

declare module 'fastify' {
  interface FastifyInstance {
    tokenFailures: TokenFailureGuard
    /** Counts the request against its address's quota; 429 (scope ip) beyond it. */
    addressQuota(request: FastifyRequest, reply: FastifyReply): Promise<void>
  }
  interface FastifyRequest {
    tokenClientId: string | null
  }
  interface FastifyContextConfig {
    /** Counted against no quota (health probes of load balancers and systemd). */
    unmetered?: boolean
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
 * cluster): per client address on every request but the hubs' (IPv6 by /64), per account on authenticated
 * routes, per hub on the agent API (a backend behind the hub's NAT must not spend the hub's quota), and
 * failed token requests per address and per client at an address.
 */
export const rateLimitPlugin = fp<{ quotas: RateLimitQuotas }>(
  async (app, { quotas }) => {
    await app.register(rateLimit, { global: false })
    const window = quotas.windowSeconds * 1000
    const byIp = app.createRateLimit({
      max: quotas.perIp,
      timeWindow: window,
      keyGenerator: (r) => `ip:${quotaAddress(r.ip)}`,
    })
    const byAccount = app.createRateLimit({
      max: quotas.perAccount,
      timeWindow: window,
      keyGenerator: (r) => `account:${r.auth?.accountId}`,
    })
    const byHub = app.createRateLimit({
      max: quotas.perHub,
      timeWindow: window,
      keyGenerator: (r) => `hub:${r.hub?.agent_id}`,
    })
    const failureWindow = quotas.tokenFailureWindowSeconds * 1000
    const failuresByIp = app.createRateLimit({
      max: quotas.tokenFailuresPerIp,
      timeWindow: failureWindow,
      keyGenerator: (r) => `token-failures-ip:${quotaAddress(r.ip)}`,
    })
    const failuresByClient = app.createRateLimit({
      max: quotas.tokenFailuresPerClient,
      timeWindow: failureWindow,
      keyGenerator: (r) => `token-failures-client:${r.tokenClientId}@${quotaAddress(r.ip)}`,
    })

    app.decorateRequest('tokenClientId', null)
    // A hub's requests count against its own quota once it is authenticated (below); a request on a hub
    // route without a valid hub credential is counted by authentication.ts through addressQuota.
    app.decorate('addressQuota', (request: FastifyRequest, reply: FastifyReply) =>
      enforce(byIp, request, reply, 'ip'),
    )
    app.addHook('onRequest', async (request, reply) => {
      const { hubAuth, unmetered } = request.routeOptions.config
      if (!hubAuth && !unmetered) await enforce(byIp, request, reply, 'ip')
    })
    app.addHook('preParsing', async (request, reply) => {
      if (request.auth) await enforce(byAccount, request, reply, 'account')
      else if (request.hub) await enforce(byHub, request, reply, 'hub')
    })

    const peek = async (limiter: Limiter, request: FastifyRequest, scope: string) => {
      const result = await limiter(request, { increment: false })
      if (!result.isAllowed && result.remaining === 0) throw exceeded(result, scope)
    }
    app.decorate('tokenFailures', {
      check: (request) => peek(failuresByIp, request, 'ip'),
      async record(request, clientId) {
        await failuresByIp(request)
        if (clientId === null) return
        request.tokenClientId = clientId
        const result = await failuresByClient(request)
        if (!result.isAllowed && result.isExceeded) throw exceeded(result, 'client')
      },
    } satisfies TokenFailureGuard)
  },
  { name: 'rate-limit', dependencies: ['request-id'] },
)
