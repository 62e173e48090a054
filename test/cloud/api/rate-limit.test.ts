import { afterEach, describe, expect, it } from 'vitest'
import { generateSecret, hashSecret } from '../../../print-api/secrets.ts'
import { ESCPOS_RECEIPT, RECEIPT_PRINTER, startTestCloud, type TestCloud } from '../test-cloud.ts'
import {
  bearer,
  expectFetchedError,
  expectInjectedError,
  expectRateLimitHeaders,
  listen,
} from './api-helpers.ts'

// Quotas over real HTTP (spec: Errors → 429 headers): per account on authenticated routes, per address on
// every route. Small quotas come from the configuration, as an operator would set them.

let cloud: TestCloud | undefined
afterEach(async () => {
  await cloud?.close()
  cloud = undefined
})

async function start(env: Record<string, string>) {
  cloud = await startTestCloud({ env })
  return { cloud, base: await listen(cloud.app) }
}

const headerOf = (res: Response) => (name: string) => res.headers.get(name)

describe('per-account quota', () => {
  it('the 6th authenticated request of an account gets 429 with the five headers and the error body', async () => {
    const { cloud, base } = await start({ RATE_LIMIT_PER_ACCOUNT: '5', RATE_LIMIT_WINDOW_SECONDS: '60' })
    const shop = await cloud.createAccount()
    const token = await shop.token()
    const remaining: (string | null)[] = []
    for (let i = 1; i <= 5; i++) {
      const res = await fetch(`${base}/api/v1/printers`, { headers: bearer(token) })
      expect(res.status, `request ${i}`).toBe(200)
      expect(res.headers.get('x-ratelimit-limit')).toBe('5')
      remaining.push(res.headers.get('x-ratelimit-remaining'))
      await res.body?.cancel()
    }
    expect(remaining).toEqual(['4', '3', '2', '1', '0'])

    const limited = await fetch(`${base}/api/v1/printers`, { headers: bearer(token) })
    expectRateLimitHeaders(headerOf(limited), 5, 'account', 60)
    expect(limited.headers.get('x-request-id')).toMatch(/\S/)
    await expectFetchedError(limited, 'rate_limited', {
      scope: 'account',
      limit: 5,
      retry_after_seconds: Number(limited.headers.get('retry-after')),
    })
  })

  it('counts every authenticated route of the account, and every token of it, against one quota', async () => {
    const { cloud, base } = await start({ RATE_LIMIT_PER_ACCOUNT: '5', RATE_LIMIT_WINDOW_SECONDS: '60' })
    const shop = await cloud.createAccount()
    const urls = [
      '/api/v1/printers',
      '/api/v1/agents',
      '/api/v1/print-jobs',
      '/api/v1/printers',
      '/api/v1/agents',
    ]
    for (const url of urls) {
      const res = await fetch(`${base}${url}`, { headers: bearer(await shop.token()) })
      expect(res.status, url).toBe(200)
      await res.body?.cancel()
    }
    const limited = await fetch(`${base}/api/v1/print-jobs`, { headers: bearer(await shop.token()) })
    expectRateLimitHeaders(headerOf(limited), 5, 'account', 60)
    await expectFetchedError(limited, 'rate_limited', {
      scope: 'account',
      limit: 5,
      retry_after_seconds: Number(limited.headers.get('retry-after')),
    })
  })

  it('another account is not affected when one account is limited', async () => {
    const { cloud, base } = await start({ RATE_LIMIT_PER_ACCOUNT: '5', RATE_LIMIT_WINDOW_SECONDS: '60' })
    const first = await cloud.createAccount('First')
    const second = await cloud.createAccount('Second')
    const token = await first.token()
    for (let i = 0; i < 6; i++) {
      const res = await fetch(`${base}/api/v1/agents`, { headers: bearer(token) })
      await res.body?.cancel()
    }
    const limited = await fetch(`${base}/api/v1/agents`, { headers: bearer(token) })
    expect(limited.status).toBe(429)
    await limited.body?.cancel()

    const other = await fetch(`${base}/api/v1/agents`, { headers: bearer(await second.token()) })
    expect(other.status).toBe(200)
    expect(other.headers.get('x-ratelimit-limit')).toBe('5')
    expect(other.headers.get('x-ratelimit-remaining')).toBe('4')
    const body = (await other.json()) as { data: { agent_id: string }[] }
    expect(body.data.map((a) => a.agent_id)).toEqual([second.agentId])
  })

  it('unauthenticated requests do not use up an account quota', async () => {
    const { cloud, base } = await start({ RATE_LIMIT_PER_ACCOUNT: '5', RATE_LIMIT_WINDOW_SECONDS: '60' })
    const shop = await cloud.createAccount()
    for (let i = 0; i < 10; i++) {
      const res = await fetch(`${base}/api/v1/printers`)
      expect(res.status).toBe(401)
      await res.body?.cancel()
    }
    const res = await fetch(`${base}/api/v1/printers`, { headers: bearer(await shop.token()) })
    expect(res.status).toBe(200)
    expect(res.headers.get('x-ratelimit-remaining')).toBe('4')
    await res.body?.cancel()
  })
})

describe('per-address quota', () => {
  it('applies to unknown routes (404): the 4th of 3 allowed gets 429 with scope ip', async () => {
    const { base } = await start({ RATE_LIMIT_PER_IP: '3', RATE_LIMIT_WINDOW_SECONDS: '60' })
    const remaining: (string | null)[] = []
    for (let i = 1; i <= 3; i++) {
      const res = await fetch(`${base}/no/such/route`)
      expect(res.status, `request ${i}`).toBe(404)
      expect(res.headers.get('x-ratelimit-limit')).toBe('3')
      remaining.push(res.headers.get('x-ratelimit-remaining'))
      await expectFetchedError(res, 'not_found')
    }
    expect(remaining).toEqual(['2', '1', '0'])
    const limited = await fetch(`${base}/no/such/route`)
    expectRateLimitHeaders(headerOf(limited), 3, 'ip', 60)
    expect(limited.headers.get('x-request-id')).toMatch(/\S/)
    await expectFetchedError(limited, 'rate_limited', {
      scope: 'ip',
      limit: 3,
      retry_after_seconds: Number(limited.headers.get('retry-after')),
    })
  })

  it('applies to /openapi.json, counted together with every other route of the address', async () => {
    const { base } = await start({ RATE_LIMIT_PER_IP: '3', RATE_LIMIT_WINDOW_SECONDS: '60' })
    for (const url of ['/openapi.json', '/no/such/route', '/api/v1/printers']) {
      const res = await fetch(`${base}${url}`)
      expect(res.status).not.toBe(429)
      await res.body?.cancel()
    }
    const limited = await fetch(`${base}/openapi.json`)
    expectRateLimitHeaders(headerOf(limited), 3, 'ip', 60)
    await expectFetchedError(limited, 'rate_limited', {
      scope: 'ip',
      limit: 3,
      retry_after_seconds: Number(limited.headers.get('retry-after')),
    })
  })

  it('applies to authenticated requests, and to /oauth/token, before the credentials are looked at', async () => {
    const { cloud, base } = await start({ RATE_LIMIT_PER_IP: '2', RATE_LIMIT_WINDOW_SECONDS: '60' })
    const shop = await cloud.createAccount()
    for (let i = 0; i < 2; i++) {
      const res = await fetch(`${base}/api/v1/printers`, { headers: bearer(await shop.token()) })
      expect(res.status).toBe(200)
      await res.body?.cancel()
    }
    const api = await fetch(`${base}/api/v1/printers`, { headers: bearer(await shop.token()) })
    expectRateLimitHeaders(headerOf(api), 2, 'ip', 60)
    await expectFetchedError(api, 'rate_limited', {
      scope: 'ip',
      limit: 2,
      retry_after_seconds: Number(api.headers.get('retry-after')),
    })
    const token = await fetch(`${base}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'client_credentials',
        client_id: shop.clientId,
        client_secret: shop.clientSecret,
      }).toString(),
    })
    expectRateLimitHeaders(headerOf(token), 2, 'ip', 60)
    await expectFetchedError(token, 'rate_limited', {
      scope: 'ip',
      limit: 2,
      retry_after_seconds: Number(token.headers.get('retry-after')),
    })
  })
})

describe('per-address quota, IPv6', () => {
  const openapiFrom = (remoteAddress: string) =>
    cloud!.app.inject({ method: 'GET', url: '/openapi.json', remoteAddress })

  it('groups IPv6 clients by /64: the 3rd request from one /64 gets 429 (scope ip), another /64 does not', async () => {
    await start({ RATE_LIMIT_PER_IP: '2', RATE_LIMIT_WINDOW_SECONDS: '60' })
    expect((await openapiFrom('2001:db8:1:2::a')).statusCode).toBe(200)
    expect((await openapiFrom('2001:db8:1:2:ffff:ffff:ffff:ffff')).statusCode).toBe(200)
    // The same /64 written out in full.
    const limited = await openapiFrom('2001:0db8:0001:0002:0000:0000:0000:000c')
    expectRateLimitHeaders((name) => limited.headers[name] as string | undefined, 2, 'ip', 60)
    expectInjectedError(limited, 'rate_limited', {
      scope: 'ip',
      limit: 2,
      retry_after_seconds: Number(limited.headers['retry-after']),
    })
    const neighbour = await openapiFrom('2001:db8:1:3::a')
    expect(neighbour.statusCode).toBe(200)
    expect(neighbour.headers['x-ratelimit-remaining']).toBe('1')
  })

  it('counts IPv4 addresses, and IPv4 addresses mapped into IPv6, one by one', async () => {
    await start({ RATE_LIMIT_PER_IP: '2', RATE_LIMIT_WINDOW_SECONDS: '60' })
    expect((await openapiFrom('198.51.100.7')).statusCode).toBe(200)
    expect((await openapiFrom('198.51.100.7')).statusCode).toBe(200)
    // ::ffff:198.51.100.7 is 198.51.100.7 (RFC 4291 §2.5.5.2): its quota is spent.
    const mapped = await openapiFrom('::ffff:198.51.100.7')
    expect(mapped.statusCode).toBe(429)
    expect(mapped.headers['x-ratelimit-scope']).toBe('ip')
    // Its neighbours are other clients, mapped or not.
    const next = await openapiFrom('::ffff:198.51.100.8')
    expect(next.statusCode).toBe(200)
    expect(next.headers['x-ratelimit-remaining']).toBe('1')
    expect((await openapiFrom('198.51.100.6')).headers['x-ratelimit-remaining']).toBe('1')
  })
})

describe('per-hub quota (agent API)', () => {
  /** An enrolled hub (agent id and credential) with one printer, as the enroll route creates it. */
  async function enrolledHub(cloud: TestCloud, accountId: string, name = 'Hub') {
    const credential = generateSecret('hub')
    const token = generateSecret('enr')
    await cloud.storage.enrollments.create(
      accountId,
      name,
      hashSecret(token),
      new Date(Date.now() + 3600_000),
    )
    const claimed = await cloud.storage.enrollments.claim(
      hashSecret(token),
      hashSecret(credential),
      'pi',
      new Date(),
    )
    if (claimed.outcome !== 'claimed') throw new Error(`claim: ${claimed.outcome}`)
    const printer = await cloud.storage.printers.insert({
      account_id: accountId,
      agent_id: claimed.agentId,
      name: 'Receipts',
      capabilities: RECEIPT_PRINTER,
      reported: true,
    })
    return { agentId: claimed.agentId, credential, printerId: printer.printer_id }
  }

  it('a hub downloads its document (200) while its address quota is spent by an API client', async () => {
    const { cloud, base } = await start({ RATE_LIMIT_PER_IP: '2', RATE_LIMIT_WINDOW_SECONDS: '60' })
    const shop = await cloud.createAccount()
    const hub = await enrolledHub(cloud, shop.accountId)
    const created = await cloud.app.inject({
      method: 'POST',
      url: '/api/v1/print-jobs/from-base64',
      remoteAddress: '192.0.2.50',
      headers: bearer(await shop.token()),
      payload: {
        document_base64: ESCPOS_RECEIPT.toString('base64'),
        document_format: 'raw',
        document_raw_language: 'escpos',
        printer_id: hub.printerId,
      },
    })
    expect(created.statusCode, created.body).toBe(201)
    const documentId = (created.json() as { document_id: string }).document_id

    // A backend behind the hub's NAT spends the address quota.
    for (let i = 0; i < 2; i++) {
      const res = await fetch(`${base}/api/v1/printers`, { headers: bearer(await shop.token()) })
      expect(res.status).toBe(200)
      await res.body?.cancel()
    }
    const spent = await fetch(`${base}/api/v1/printers`, { headers: bearer(await shop.token()) })
    expect(spent.status).toBe(429)
    expect(spent.headers.get('x-ratelimit-scope')).toBe('ip')
    await spent.body?.cancel()

    const download = await fetch(`${base}/agent-api/v1/documents/${documentId}`, {
      headers: bearer(hub.credential),
    })
    expect(download.status).toBe(200)
    expect(download.headers.get('x-ratelimit-limit')).toBe('1200')
    expect(download.headers.get('x-ratelimit-remaining')).toBe('1199')
    expect(Buffer.from(await download.arrayBuffer())).toEqual(ESCPOS_RECEIPT)
    const connection = await fetch(`${base}/agent-api/v1/connection`, { headers: bearer(hub.credential) })
    expect(connection.status).toBe(200)
    expect(connection.headers.get('x-ratelimit-remaining')).toBe('1198')
    await connection.body?.cancel()
  })

  it('requests on hub routes without a valid hub credential count against the address quota', async () => {
    const { cloud, base } = await start({ RATE_LIMIT_PER_IP: '2', RATE_LIMIT_WINDOW_SECONDS: '60' })
    const shop = await cloud.createAccount()
    const hub = await enrolledHub(cloud, shop.accountId)
    const connection = (credential: string) =>
      fetch(`${base}/agent-api/v1/connection`, { headers: bearer(credential) })
    for (let i = 1; i <= 2; i++) {
      const res = await connection('hub_not-a-credential')
      expect(res.headers.get('x-ratelimit-remaining')).toBe(String(2 - i))
      await expectFetchedError(res, 'hub_credential_invalid')
    }
    const limited = await connection('hub_not-a-credential')
    expectRateLimitHeaders(headerOf(limited), 2, 'ip', 60)
    await expectFetchedError(limited, 'rate_limited', {
      scope: 'ip',
      limit: 2,
      retry_after_seconds: Number(limited.headers.get('retry-after')),
    })
    // The hub at the same address is counted by its own quota.
    const own = await connection(hub.credential)
    expect(own.status).toBe(200)
    expect(own.headers.get('x-ratelimit-limit')).toBe('1200')
    await own.body?.cancel()
  })

  it('the 4th of 3 allowed requests of a hub gets 429 with scope hub; another hub is not affected', async () => {
    const { cloud, base } = await start({ RATE_LIMIT_PER_HUB: '3', RATE_LIMIT_WINDOW_SECONDS: '60' })
    const shop = await cloud.createAccount()
    const first = await enrolledHub(cloud, shop.accountId, 'First')
    const second = await enrolledHub(cloud, shop.accountId, 'Second')
    const connection = (credential: string) =>
      fetch(`${base}/agent-api/v1/connection`, { headers: bearer(credential) })
    for (let i = 1; i <= 3; i++) {
      const res = await connection(first.credential)
      expect(res.status, `request ${i}`).toBe(200)
      expect(res.headers.get('x-ratelimit-remaining')).toBe(String(3 - i))
      await res.body?.cancel()
    }
    const limited = await connection(first.credential)
    expectRateLimitHeaders(headerOf(limited), 3, 'hub', 60)
    await expectFetchedError(limited, 'rate_limited', {
      scope: 'hub',
      limit: 3,
      retry_after_seconds: Number(limited.headers.get('retry-after')),
    })
    const other = await connection(second.credential)
    expect(other.status).toBe(200)
    expect(other.headers.get('x-ratelimit-remaining')).toBe('2')
    await other.body?.cancel()
  })
})
