import rateLimit from '@fastify/rate-limit'
import type { FastifyBaseLogger, FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { Redis } from 'ioredis'
import { ApiError } from '../../print-api/api-error.ts'
import { quotaAddress } from './quota-address.ts'

export interface RateLimitQuotas {
  windowSeconds: number
  perIp: number
  perAccount: number
  perHub: number
  /** Partner and developer API requests per application (its assertions). */
  perApplication: number
  /** /api/v1 requests per app installation (its tokens), instead of the account's quota. */
  perInstallation: number
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

/** A quota count waits this long for Redis; past it the request goes through uncounted. */
const REDIS_COMMAND_TIMEOUT_MS = 500
/** After Redis failed a count, requests go through uncounted without asking it for this long. */
const REDIS_RETRY_AFTER_FAILURE_MS = 1000
/** Longest wait between attempts to reconnect to Redis. */
const REDIS_RECONNECT_MAX_MS = 1000

/**
 * The Redis that keeps the quotas when several cloud nodes share them (REDIS_URL), through
 * @fastify/rate-limit's own Redis store: the same keys, limits and windows as in memory.
 *
 * A Redis that cannot count a request does not refuse it: the request goes through uncounted and without
 * X-RateLimit headers (fail open), and the cloud logs once when Redis stops answering and once when it
 * answers again. A print service would rather print during an outage of its quota store than refuse every
 * job; the other bounds (queue capacity, storage quota, bodies in flight, inspection queues) still hold.
 * Requests do not queue up behind a Redis that is out: commands are not held while disconnected, a
 * connected Redis that does not answer fails the count after REDIS_COMMAND_TIMEOUT_MS, and after a failure
 * Redis is not asked for REDIS_RETRY_AFTER_FAILURE_MS, then by one request at a time until it answers.
 * (@fastify/rate-limit's `skipOnError` would also let such requests through, but silently, and with headers
 * announcing a full quota.)
 */
export interface QuotaStore {
  redis: Redis
  /** Whether Redis answered the last time it was asked (or connected). */
  reachable(): boolean
  /** The limiter's answer, or null when Redis could not give one. */
  count(attempt: () => Promise<LimitResult>): Promise<LimitResult | null>
  /** Closes the connection; counts from now on fail. */
  close(): Promise<void>
}

/** Connects to the Redis at `url` (waiting for the first attempt only; it keeps reconnecting). */
export async function connectQuotaStore(url: string, log: FastifyBaseLogger): Promise<QuotaStore> {
  const redis = new Redis(url, {
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    commandTimeout: REDIS_COMMAND_TIMEOUT_MS,
    connectTimeout: 2000,
    // A Redis that does not answer does not close its side either: the socket is dropped after this.
    disconnectTimeout: REDIS_COMMAND_TIMEOUT_MS,
    retryStrategy: (attempt) => Math.min(attempt * 100, REDIS_RECONNECT_MAX_MS),
    // The counts of the requests a node takes in one turn of its event loop go to Redis in one write (each
    // request is counted twice: its address and its account).
    enableAutoPipelining: true,
  })
  // Where it is, without credentials, for the log.
  const { protocol, host } = new URL(url)
  const where = `${protocol}//${host}`
  let up = false
  let failedAt = 0
  let closing = false
  let probing = false
  const answered = () => {
    if (up) return
    if (failedAt !== 0) log.info({ redis: where }, 'Redis answers again: request quotas are enforced')
    up = true
    failedAt = 0
  }
  const failed = (error: unknown) => {
    if (closing) return
    failedAt = Date.now()
    if (!up) return
    up = false
    const reason = error instanceof Error ? error.message : String(error)
    log.warn({ redis: where, error: reason }, 'Redis unreachable: request quotas are not enforced')
  }
  redis.on('ready', answered)
  redis.on('error', failed)
  redis.on('close', () => failed(new Error('connection closed')))

  // The first attempt at start-up: a Redis that is down then is logged as one that went down.
  up = true
  await redis.connect().catch(() => {})

  return {
    redis,
    reachable: () => up,
    async count(attempt) {
      // While Redis is out, one request at a time, once a failure is old enough, tries whether it answers.
      if (!up && (probing || Date.now() - failedAt < REDIS_RETRY_AFTER_FAILURE_MS)) return null
      const probe = !up
      if (probe) probing = true
      try {
        const result = await attempt()
        answered()
        return result
      } catch (error) {
        failed(error)
        return null
      } finally {
        if (probe) probing = false
      }
    },
    async close() {
      closing = true
      // Only a live connection ends with 'end'; one waiting to reconnect just stops trying.
      const live = ['connecting', 'connect', 'ready'].includes(redis.status)
      const ended = live ? new Promise((resolve) => redis.once('end', resolve)) : undefined
      redis.disconnect()
      await ended
    },
  }
}

/**
 * Quotas on every endpoint, counted by @fastify/rate-limit's store (in memory; in Redis given a `store`):
 * per client address on every request but the hubs' (IPv6 by /64), per account on routes an API client's
 * token authenticates, per installation on those an installation token does, per application on the
 * developer and partner APIs, per hub on the agent API (a backend behind the hub's NAT must not spend the hub's quota), and failed token
 * requests per address and per client at an address.
 */
export const rateLimitPlugin = fp<{ quotas: RateLimitQuotas; store?: QuotaStore }>(
  async (app, { quotas, store }) => {
    await app.register(rateLimit, {
      global: false,
      ...(store && { redis: store.redis, nameSpace: 'print-hub:quota:' }),
    })
    /** The limiter's count; null when the Redis store could not count (the request goes through). */
    const count = (limiter: Limiter, request: FastifyRequest, options?: { increment: false }) =>
      store ? store.count(() => limiter(request, options)) : limiter(request, options)
    const enforce = async (limiter: Limiter, request: FastifyRequest, reply: FastifyReply, scope: string) => {
      const result = await count(limiter, request)
      if (result === null || result.isAllowed) return
      if (result.isExceeded) throw exceeded(result, scope)
      reply.headers({ ...quotaHeaders(result, result.remaining), 'x-ratelimit-scope': scope })
    }
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
    // Keyed by who calls, so one partner's burst never spends another's quota or a customer's own clients'.
    const byApplication = app.createRateLimit({
      max: quotas.perApplication,
      timeWindow: window,
      keyGenerator: (r) => `application:${r.application?.app_id}`,
    })
    const byInstallation = app.createRateLimit({
      max: quotas.perInstallation,
      timeWindow: window,
      keyGenerator: (r) => `installation:${r.auth?.installationId}`,
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
      if (request.application) await enforce(byApplication, request, reply, 'application')
      else if (request.auth?.installationId) await enforce(byInstallation, request, reply, 'installation')
      else if (request.auth) await enforce(byAccount, request, reply, 'account')
      else if (request.hub) await enforce(byHub, request, reply, 'hub')
    })

    const peek = async (limiter: Limiter, request: FastifyRequest, scope: string) => {
      const result = await count(limiter, request, { increment: false })
      if (result && !result.isAllowed && result.remaining === 0) throw exceeded(result, scope)
    }
    app.decorate('tokenFailures', {
      check: (request) => peek(failuresByIp, request, 'ip'),
      async record(request, clientId) {
        await count(failuresByIp, request)
        if (clientId === null) return
        request.tokenClientId = clientId
        const result = await count(failuresByClient, request)
        if (result && !result.isAllowed && result.isExceeded) throw exceeded(result, 'client')
      },
    } satisfies TokenFailureGuard)
  },
  { name: 'rate-limit', dependencies: ['request-id'] },
)
