import type { LightMyRequestResponse } from 'fastify'
import { pino } from 'pino'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { freePort } from '../../helpers/free-port.ts'
import { type RedisServer, startRedisServer } from '../../helpers/redis-server.ts'
import { startFullCloud } from '../hub-link.ts'
import { startTestCloud, type TestCloud } from '../test-cloud.ts'
import { bearer, expectInjectedError, expectRateLimitHeaders } from './api-helpers.ts'

// REDIS_URL: the quotas are counted in one Redis (a real redis-server here) that every cloud node shares, so a
// quota holds across nodes; without it each node counts alone. A Redis that cannot count lets requests
// through uncounted (fail open) rather than refusing them or answering 500.

const WINDOW = 60

let clouds: TestCloud[] = []
afterEach(async () => {
  // The last started first: a node started on another's data directory closes before that one removes it.
  for (const cloud of clouds.reverse()) await cloud.close()
  clouds = []
})

async function node(env: Record<string, string>, dataDir?: string): Promise<TestCloud> {
  const cloud = await startTestCloud({ env, ...(dataDir !== undefined && { dataDir }) })
  clouds.push(cloud)
  return cloud
}

const openapi = (cloud: TestCloud, remoteAddress: string) =>
  cloud.app.inject({ method: 'GET', url: '/openapi.json', remoteAddress })

const header = (res: LightMyRequestResponse) => (name: string) => res.headers[name] as string | undefined

/** The quota headers of an answer (X-RateLimit-*, Retry-After), by name. */
function quotaHeaders(res: LightMyRequestResponse): Record<string, string> {
  return Object.fromEntries(
    Object.entries(res.headers)
      .filter(([name]) => name.startsWith('x-ratelimit-') || name === 'retry-after')
      .map(([name, value]) => [name, String(value)]),
  )
}

/** A 429 of the address quota of `limit`: headers and body as the in-memory store gives them. */
function expectAddressLimited(res: LightMyRequestResponse, limit: number) {
  expectRateLimitHeaders(header(res), limit, 'ip', WINDOW)
  expectInjectedError(res, 'rate_limited', {
    scope: 'ip',
    limit,
    retry_after_seconds: Number(res.headers['retry-after']),
  })
}

describe('quotas in a shared Redis (REDIS_URL)', () => {
  let redis: RedisServer
  beforeAll(async () => {
    redis = await startRedisServer()
  })
  afterAll(async () => {
    await redis?.stop()
  })

  it('a quota of 4 spread over two nodes is spent at 4: the 5th request on either node is 429, headers as in memory', async () => {
    const env = { REDIS_URL: redis.url, RATE_LIMIT_PER_IP: '4' }
    const nodes = [await node(env), await node(env)]
    const address = '198.51.100.10'
    const remaining: string[] = []
    for (const i of [0, 1, 0, 1]) {
      const res = await openapi(nodes[i]!, address)
      expect(res.statusCode).toBe(200)
      expect(res.headers['x-ratelimit-limit']).toBe('4')
      expect(res.headers['x-ratelimit-scope']).toBe('ip')
      remaining.push(String(res.headers['x-ratelimit-remaining']))
    }
    expect(remaining).toEqual(['3', '2', '1', '0'])
    const onFirst = await openapi(nodes[0]!, address)
    const onSecond = await openapi(nodes[1]!, address)
    expectAddressLimited(onFirst, 4)
    expectAddressLimited(onSecond, 4)

    // The same answer as a node counting in memory gives its 5th request.
    const alone = await node({ RATE_LIMIT_PER_IP: '4' })
    for (let i = 0; i < 4; i++) expect((await openapi(alone, address)).statusCode).toBe(200)
    const inMemory = await openapi(alone, address)
    expectAddressLimited(inMemory, 4)
    expect(Object.keys(quotaHeaders(onFirst)).sort()).toEqual(Object.keys(quotaHeaders(inMemory)).sort())
  })

  it('an account quota is shared too: two nodes on one database, the 4th of 3 requests is 429 (scope account)', async () => {
    const env = { REDIS_URL: redis.url, RATE_LIMIT_PER_ACCOUNT: '3' }
    const first = await node(env)
    const second = await node(env, first.dataDir)
    const shop = await first.createAccount()
    const token = await shop.token()
    const printers = (cloud: TestCloud) =>
      cloud.app.inject({ method: 'GET', url: '/api/v1/printers', headers: bearer(token) })
    for (const [i, cloud] of [first, second, first].entries()) {
      const res = await printers(cloud)
      expect(res.statusCode).toBe(200)
      expect(res.headers['x-ratelimit-scope']).toBe('account')
      expect(res.headers['x-ratelimit-remaining']).toBe(String(2 - i))
    }
    const limited = await printers(second)
    expectRateLimitHeaders(header(limited), 3, 'account', WINDOW)
    expectInjectedError(limited, 'rate_limited', {
      scope: 'account',
      limit: 3,
      retry_after_seconds: Number(limited.headers['retry-after']),
    })
  })

  it('failed token requests are counted across nodes: the 3rd of 2 allowed failures from an address is 429', async () => {
    const env = { REDIS_URL: redis.url, TOKEN_FAILURES_PER_IP: '2' }
    const nodes = [await node(env), await node(env)]
    const attempt = (cloud: TestCloud) =>
      cloud.app.inject({
        method: 'POST',
        url: '/oauth/token',
        remoteAddress: '198.51.100.20',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: 'grant_type=client_credentials&client_id=nobody&client_secret=wrong',
      })
    expectInjectedError(await attempt(nodes[0]!), 'invalid_client')
    expectInjectedError(await attempt(nodes[1]!), 'invalid_client')
    const limited = await attempt(nodes[0]!)
    expect(limited.statusCode).toBe(429)
    expect(limited.headers['x-ratelimit-scope']).toBe('ip')
  })

  it('without REDIS_URL each node counts alone: 4 requests on each node pass, the 5th on one node is 429', async () => {
    const env = { RATE_LIMIT_PER_IP: '4' }
    const nodes = [await node(env), await node(env)]
    const address = '198.51.100.30'
    for (const i of [0, 1, 0, 1, 0, 1, 0, 1]) expect((await openapi(nodes[i]!, address)).statusCode).toBe(200)
    expectAddressLimited(await openapi(nodes[0]!, address), 4)
  })
})

describe('a Redis that cannot count (fail open)', () => {
  let redis: RedisServer | undefined
  let full: Awaited<ReturnType<typeof startFullCloud>> | undefined
  afterEach(async () => {
    await full?.close()
    full = undefined
    await redis?.stop()
    redis = undefined
  })

  /** Uncounted: 200, and no quota headers (the quota is not known). */
  const expectUncounted = (res: { status: number; headers: Headers }) => {
    expect(res.status).toBe(200)
    expect(res.headers.get('x-ratelimit-limit')).toBeNull()
    expect(res.headers.get('x-ratelimit-scope')).toBeNull()
  }

  it('stopped mid-run: requests pass uncounted, never 500 or 429, logged once; counted again once Redis is back', async () => {
    redis = await startRedisServer()
    const { port } = redis
    const lines: Record<string, unknown>[] = []
    const logger = pino({ level: 'info' }, { write: (line: string) => lines.push(JSON.parse(line)) })
    full = await startFullCloud({ REDIS_URL: redis.url, RATE_LIMIT_PER_IP: '3' }, logger)
    const get = async () => {
      const res = await fetch(`${full!.url}/openapi.json`)
      // Read to the end: a response left half-read would hold the cloud's shutdown.
      await res.arrayBuffer()
      return res
    }
    for (const left of ['2', '1']) expect((await get()).headers.get('x-ratelimit-remaining')).toBe(left)

    await redis.stop()
    for (let i = 0; i < 5; i++) expectUncounted(await get())
    const outages = lines.filter((line) => line.msg === 'Redis unreachable: request quotas are not enforced')
    expect(outages).toEqual([
      expect.objectContaining({ level: 40, redis: `redis://127.0.0.1:${port}`, error: expect.any(String) }),
    ])

    // A Redis restarted without persistence has forgotten the counts: a fresh quota of 3.
    redis = await startRedisServer({ port })
    await expect
      .poll(() => lines.some((line) => line.msg === 'Redis answers again: request quotas are enforced'))
      .toBe(true)
    for (const left of ['2', '1', '0']) expect((await get()).headers.get('x-ratelimit-remaining')).toBe(left)
    expect((await get()).status).toBe(429)
    expect(
      lines.filter((line) => line.msg === 'Redis unreachable: request quotas are not enforced'),
    ).toHaveLength(1)
  })

  it('not answering (paused): a request waits at most about the command timeout, then passes uncounted', async () => {
    redis = await startRedisServer()
    const cloud = await node({ REDIS_URL: redis.url, RATE_LIMIT_PER_IP: '1' })
    const address = '198.51.100.40'
    expect((await openapi(cloud, address)).statusCode).toBe(200)
    expect((await openapi(cloud, address)).statusCode).toBe(429)

    redis.pause()
    for (let i = 0; i < 3; i++) {
      const started = Date.now()
      const res = await openapi(cloud, address)
      expect(res.statusCode).toBe(200)
      expect(res.headers['x-ratelimit-limit']).toBeUndefined()
      expect(Date.now() - started).toBeLessThan(2_000)
    }
    redis.resume()
    // Counted again once Redis answers: the quota it kept is still spent.
    await expect.poll(async () => (await openapi(cloud, address)).statusCode, { timeout: 5_000 }).toBe(429)
  })

  it('down at start: the cloud starts and serves uncounted, and counts once Redis is up', async () => {
    const port = await freePort()
    const cloud = await node({ REDIS_URL: `redis://127.0.0.1:${port}`, RATE_LIMIT_PER_IP: '2' })
    const address = '198.51.100.50'
    for (let i = 0; i < 4; i++) {
      const res = await openapi(cloud, address)
      expect(res.statusCode).toBe(200)
      expect(res.headers['x-ratelimit-limit']).toBeUndefined()
    }
    redis = await startRedisServer({ port })
    await expect
      .poll(async () => (await openapi(cloud, address)).headers['x-ratelimit-limit'], { timeout: 5_000 })
      .toBe('2')
  })
})
