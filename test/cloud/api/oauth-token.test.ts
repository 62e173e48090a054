import { randomUUID } from 'node:crypto'
import { readFileSync } from 'node:fs'
import path from 'node:path'
import Database from 'better-sqlite3'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { DATABASE_FILE } from '../../../cloud/storage/storage.ts'
import { generateSecret, hashSecret } from '../../../print-api/secrets.ts'
import type { Scope } from '../../../protocol/enums.ts'
import { ALL_SCOPES, startTestCloud, type TestAccount, type TestCloud } from '../test-cloud.ts'
import {
  expectErrorBody,
  expectFetchedError,
  expectInjectedError,
  expectRateLimitHeaders,
  listen,
} from './api-helpers.ts'

// POST /oauth/token: the client credentials grant (RFC 6749 §4.4), over real HTTP against a real SQLite file.

const FORM = { 'content-type': 'application/x-www-form-urlencoded' }

/** RFC 6749 §2.3.1: the id and secret are each form-urlencoded (Appendix B), then joined by ':' for Basic. */
function formEncode(value: string): string {
  return new URLSearchParams({ v: value }).toString().slice(2)
}
function basic(id: string, secret: string): string {
  return `Basic ${Buffer.from(`${formEncode(id)}:${formEncode(secret)}`, 'utf8').toString('base64')}`
}

let cloud: TestCloud
let base: string
let account: TestAccount

beforeEach(async () => {
  cloud = await startTestCloud()
  base = await listen(cloud.app)
  account = await cloud.createAccount()
})
afterEach(async () => {
  await cloud?.close()
})

function tokenRequest(form: Record<string, string>, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${base}/oauth/token`, {
    method: 'POST',
    headers: { ...FORM, ...headers },
    body: new URLSearchParams(form).toString(),
  })
}

const credentials = () => ({ client_id: account.clientId, client_secret: account.clientSecret })

async function expectTokenResponse(res: Response, scopes: readonly Scope[]) {
  expect(res.status).toBe(200)
  expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8')
  expect(res.headers.get('cache-control')).toBe('no-store')
  expect(res.headers.get('x-request-id')).toMatch(/\S/)
  const body = (await res.json()) as Record<string, unknown>
  expect(body).toStrictEqual({
    access_token: expect.any(String),
    token_type: 'Bearer',
    expires_in: 3600,
    scope: expect.any(String),
  })
  expect((body.access_token as string).length).toBeGreaterThanOrEqual(22) // ≥ 128 bits of entropy
  expect((body.scope as string).split(' ').sort()).toEqual([...scopes].sort())
  return body as { access_token: string; scope: string }
}

const getPrinters = (token: string) =>
  fetch(`${base}/api/v1/printers`, { headers: { authorization: `Bearer ${token}` } })

describe('POST /oauth/token: issuing', () => {
  it('issues a Bearer token for credentials in the form body, with all client scopes by default', async () => {
    const res = await tokenRequest({ grant_type: 'client_credentials', ...credentials() })
    await expectTokenResponse(res, ALL_SCOPES)
  })

  it('issues a token for credentials in HTTP Basic (form-urlencoded id:secret, RFC 6749 §2.3.1)', async () => {
    const res = await tokenRequest(
      { grant_type: 'client_credentials' },
      { authorization: basic(account.clientId, account.clientSecret) },
    )
    await expectTokenResponse(res, ALL_SCOPES)
  })

  it('decodes the form-urlencoding inside HTTP Basic (a secret with ":", " ", "+", "/" and "%")', async () => {
    const secret = 'se:cr et+/%41é'
    const client = await cloud.storage.apiClients.create(account.accountId, hashSecret(secret), [
      'printers:read',
    ])
    const res = await tokenRequest(
      { grant_type: 'client_credentials' },
      { authorization: basic(client.client_id, secret) },
    )
    await expectTokenResponse(res, ['printers:read'])
  })

  it('the issued token works on GET /api/v1/printers', async () => {
    const { access_token } = await expectTokenResponse(
      await tokenRequest({ grant_type: 'client_credentials', ...credentials() }),
      ALL_SCOPES,
    )
    const res = await getPrinters(access_token)
    expect(res.status).toBe(200)
    const body = (await res.json()) as { data: { printer_id: string }[]; next_cursor: string | null }
    expect(body.data.map((p) => p.printer_id).sort()).toEqual(
      [account.receiptPrinterId, account.labelPrinterId].sort(),
    )
    expect(body.next_cursor).toBeNull()
  })

  it('`scope` narrows the token; a route needing another scope then answers 403', async () => {
    const { access_token } = await expectTokenResponse(
      await tokenRequest({ grant_type: 'client_credentials', scope: 'printers:read', ...credentials() }),
      ['printers:read'],
    )
    expect((await getPrinters(access_token)).status).toBe(200)
    const res = await fetch(`${base}/api/v1/print-jobs`, {
      headers: { authorization: `Bearer ${access_token}` },
    })
    await expectFetchedError(res, 'insufficient_scope', {
      required_scopes: ['print_jobs:read'],
      missing_scopes: ['print_jobs:read'],
    })
  })

  it('`scope` with several space-separated scopes grants exactly those', async () => {
    const res = await tokenRequest({
      grant_type: 'client_credentials',
      scope: 'print_jobs:read print_jobs:write',
      ...credentials(),
    })
    const { access_token } = await expectTokenResponse(res, ['print_jobs:read', 'print_jobs:write'])
    await expectFetchedError(await getPrinters(access_token), 'insufficient_scope', {
      required_scopes: ['printers:read'],
      missing_scopes: ['printers:read'],
    })
  })

  it('successful requests are not counted as failures: 30 in a row all get 200', async () => {
    for (let i = 0; i < 30; i++) {
      const res = await tokenRequest({ grant_type: 'client_credentials', ...credentials() })
      expect(res.status, `request ${i + 1}`).toBe(200)
      await res.body?.cancel()
    }
  })
})

describe('POST /oauth/token: request errors', () => {
  it('a scope the client was not granted → 400 invalid_scope', async () => {
    const client = await cloud.storage.apiClients.create(account.accountId, hashSecret('narrow-secret'), [
      'printers:read',
    ])
    const res = await tokenRequest({
      grant_type: 'client_credentials',
      client_id: client.client_id,
      client_secret: 'narrow-secret',
      scope: 'printers:read print_jobs:write',
    })
    await expectFetchedError(res, 'invalid_scope', { refused_scopes: ['print_jobs:write'] })
  })

  it('an unknown scope → 400 invalid_scope', async () => {
    const res = await tokenRequest({ grant_type: 'client_credentials', scope: 'admin', ...credentials() })
    await expectFetchedError(res, 'invalid_scope', { refused_scopes: ['admin'] })
  })

  it('another grant type → 400 unsupported_grant_type', async () => {
    const res = await tokenRequest({ grant_type: 'password', ...credentials() })
    await expectFetchedError(res, 'unsupported_grant_type')
  })

  it('no grant_type → 400 invalid_request', async () => {
    const res = await tokenRequest(credentials())
    await expectFetchedError(res, 'invalid_request')
  })

  it('a JSON body instead of a form → 400 invalid_request', async () => {
    const res = await fetch(`${base}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ grant_type: 'client_credentials', ...credentials() }),
    })
    await expectFetchedError(res, 'invalid_request')
  })

  it('a Bearer header beside the credentials → 400 invalid_request that says so', async () => {
    const res = await tokenRequest(
      { grant_type: 'client_credentials', ...credentials() },
      { authorization: 'Bearer pat_some-earlier-token' },
    )
    expect(res.status).toBe(400)
    const body = (await res.json()) as { message: string }
    expectErrorBody(body, 'invalid_request')
    expect(body.message).toContain('Authorization: Bearer')
    expect(body.message).toContain('without that header')
  })

  it('credentials both in HTTP Basic and in the body → 400 invalid_request', async () => {
    const res = await tokenRequest(
      { grant_type: 'client_credentials', ...credentials() },
      { authorization: basic(account.clientId, account.clientSecret) },
    )
    await expectFetchedError(res, 'invalid_request')
  })
})

describe('POST /oauth/token: client authentication failures', () => {
  it('a wrong secret in the body → 401 invalid_client', async () => {
    const res = await tokenRequest({
      grant_type: 'client_credentials',
      client_id: account.clientId,
      client_secret: `${account.clientSecret}x`,
    })
    await expectFetchedError(res, 'invalid_client')
  })

  it('an unknown client → 401 invalid_client', async () => {
    const res = await tokenRequest({
      grant_type: 'client_credentials',
      client_id: randomUUID(),
      client_secret: account.clientSecret,
    })
    await expectFetchedError(res, 'invalid_client')
  })

  it('no credentials at all → 401 invalid_client', async () => {
    const res = await tokenRequest({ grant_type: 'client_credentials' })
    expect(res.headers.get('www-authenticate')).toBe('Basic realm="print-hub"')
    await expectFetchedError(res, 'invalid_client')
  })

  it('a wrong secret over HTTP Basic → 401 invalid_client with WWW-Authenticate: Basic realm="print-hub"', async () => {
    const res = await tokenRequest(
      { grant_type: 'client_credentials' },
      { authorization: basic(account.clientId, 'wrong') },
    )
    expect(res.headers.get('www-authenticate')).toBe('Basic realm="print-hub"')
    await expectFetchedError(res, 'invalid_client')
  })

  it('an unknown client over HTTP Basic → 401 invalid_client with the Basic challenge', async () => {
    const res = await tokenRequest(
      { grant_type: 'client_credentials' },
      { authorization: basic(randomUUID(), 'whatever') },
    )
    expect(res.headers.get('www-authenticate')).toBe('Basic realm="print-hub"')
    await expectFetchedError(res, 'invalid_client')
  })
})

describe('POST /oauth/token: secrets at rest', () => {
  it('stores the client secret and the access tokens only as SHA-256 hashes', async () => {
    const { access_token } = await expectTokenResponse(
      await tokenRequest({ grant_type: 'client_credentials', ...credentials() }),
      ALL_SCOPES,
    )
    const file = path.join(cloud.dataDir, DATABASE_FILE)
    const db = new Database(file, { readonly: true, fileMustExist: true })
    try {
      const clients = db
        .prepare('SELECT * FROM api_clients WHERE client_id = ?')
        .all(account.clientId) as Record<string, unknown>[]
      expect(clients).toHaveLength(1)
      const client = clients[0]!
      expect(Buffer.isBuffer(client.secret_hash)).toBe(true)
      expect((client.secret_hash as Buffer).equals(hashSecret(account.clientSecret))).toBe(true)
      for (const value of Object.values(client)) {
        expect(String(value)).not.toContain(account.clientSecret)
        if (Buffer.isBuffer(value)) expect(value.includes(account.clientSecret)).toBe(false)
      }

      const tokens = db
        .prepare('SELECT * FROM access_tokens WHERE client_id = ?')
        .all(account.clientId) as Record<string, unknown>[]
      expect(tokens).toHaveLength(1)
      const token = tokens[0]!
      expect((token.token_hash as Buffer).equals(hashSecret(access_token))).toBe(true)
      for (const value of Object.values(token)) {
        expect(String(value)).not.toContain(access_token)
        if (Buffer.isBuffer(value)) expect(value.includes(access_token)).toBe(false)
      }
    } finally {
      db.close()
    }
    // Nowhere in the database file or its write-ahead log, in any table.
    for (const name of [file, `${file}-wal`]) {
      let bytes: Buffer
      try {
        bytes = readFileSync(name)
      } catch {
        continue
      }
      expect(bytes.includes(account.clientSecret)).toBe(false)
      expect(bytes.includes(access_token)).toBe(false)
    }
  })
})

describe('POST /oauth/token: failed-attempt limiting (default quotas)', () => {
  it('10 failures for one client get 401; the 11th gets 429 (scope client), over HTTP Basic too', async () => {
    expect(cloud.config.tokenFailuresPerClient).toBe(10)
    expect(cloud.config.tokenFailureWindowSeconds).toBe(900)
    const wrong = { grant_type: 'client_credentials', client_id: account.clientId, client_secret: 'wrong' }
    for (let i = 1; i <= 10; i++) {
      const res = await tokenRequest(wrong)
      expect(res.status, `failure ${i}`).toBe(401)
      await expectFetchedError(res, 'invalid_client')
    }
    const limited = await tokenRequest(wrong)
    expectRateLimitHeaders((name) => limited.headers.get(name), 10, 'client', 900)
    expect(limited.headers.get('x-request-id')).toMatch(/\S/)
    await expectFetchedError(limited, 'rate_limited', {
      scope: 'client',
      limit: 10,
      retry_after_seconds: Number(limited.headers.get('retry-after')),
    })
    // The quota is the client's at this address, however it authenticates.
    const viaBasic = await tokenRequest(
      { grant_type: 'client_credentials' },
      { authorization: basic(account.clientId, 'wrong') },
    )
    expect(viaBasic.status).toBe(429)
    expect(viaBasic.headers.get('x-ratelimit-scope')).toBe('client')
    await viaBasic.body?.cancel()
  })

  it('a client id is not a secret (RFC 6749 §2.2): failures with it never refuse the right secret', async () => {
    const ATTACKER = '203.0.113.5'
    const CLIENT = '198.51.100.7'
    const from = (remoteAddress: string, secret: string) =>
      cloud.app.inject({
        method: 'POST',
        url: '/oauth/token',
        remoteAddress,
        headers: FORM,
        payload: new URLSearchParams({
          grant_type: 'client_credentials',
          client_id: account.clientId,
          client_secret: secret,
        }).toString(),
      })
    for (let i = 1; i <= 10; i++) expectInjectedError(await from(ATTACKER, `wrong-${i}`), 'invalid_client')
    const attackerLimited = await from(ATTACKER, 'wrong-11')
    expectInjectedError(attackerLimited, 'rate_limited', {
      scope: 'client',
      limit: 10,
      retry_after_seconds: Number(attackerLimited.headers['retry-after']),
    })
    expect(attackerLimited.headers['x-ratelimit-scope']).toBe('client')

    // The real client, at its own address: the right secret gets a token; a wrong one is its own first failure.
    const right = await from(CLIENT, account.clientSecret)
    expect(right.statusCode, right.body).toBe(200)
    expect(right.json()).toStrictEqual({
      access_token: expect.any(String),
      token_type: 'Bearer',
      expires_in: 3600,
      scope: ALL_SCOPES.join(' '),
    })
    expectInjectedError(await from(CLIENT, 'typo'), 'invalid_client')
    // The secret is checked first: even from the limited address the right secret is not refused.
    expect((await from(ATTACKER, account.clientSecret)).statusCode).toBe(200)
  })

  it('another client of the same address is not locked out by one client reaching its quota', async () => {
    const other = await cloud.createAccount('Other shop')
    for (let i = 0; i < 10; i++) {
      const res = await tokenRequest({
        grant_type: 'client_credentials',
        client_id: account.clientId,
        client_secret: 'wrong',
      })
      expect(res.status).toBe(401)
      await res.body?.cancel()
    }
    const res = await tokenRequest({
      grant_type: 'client_credentials',
      client_id: other.clientId,
      client_secret: other.clientSecret,
    })
    expect(res.status).toBe(200)
    await res.body?.cancel()
  })

  it('failures spread over many unknown client ids hit the per-address quota at 20 (scope ip)', async () => {
    expect(cloud.config.tokenFailuresPerIp).toBe(20)
    for (let i = 1; i <= 20; i++) {
      const res = await tokenRequest({
        grant_type: 'client_credentials',
        client_id: randomUUID(),
        client_secret: generateSecret('cs'),
      })
      expect(res.status, `failure ${i}`).toBe(401)
      await expectFetchedError(res, 'invalid_client')
    }
    const limited = await tokenRequest({
      grant_type: 'client_credentials',
      client_id: randomUUID(),
      client_secret: 'x',
    })
    expectRateLimitHeaders((name) => limited.headers.get(name), 20, 'ip', 900)
    await expectFetchedError(limited, 'rate_limited', {
      scope: 'ip',
      limit: 20,
      retry_after_seconds: Number(limited.headers.get('retry-after')),
    })
    // Against guessing, the address is refused before any secret is checked, even a right one.
    const right = await tokenRequest({ grant_type: 'client_credentials', ...credentials() })
    expect(right.status).toBe(429)
    expect(right.headers.get('x-ratelimit-scope')).toBe('ip')
    await right.body?.cancel()
    // Another address is not: the client gets its token there.
    const elsewhere = await cloud.app.inject({
      method: 'POST',
      url: '/oauth/token',
      remoteAddress: '198.51.100.7',
      headers: FORM,
      payload: new URLSearchParams({ grant_type: 'client_credentials', ...credentials() }).toString(),
    })
    expect(elsewhere.statusCode, elsewhere.body).toBe(200)
  })

  it('requests without any credentials count against the per-address quota', async () => {
    for (let i = 1; i <= 20; i++) {
      const res = await tokenRequest({ grant_type: 'client_credentials' })
      expect(res.status, `failure ${i}`).toBe(401)
      await res.body?.cancel()
    }
    const limited = await tokenRequest({ grant_type: 'client_credentials' })
    expectRateLimitHeaders((name) => limited.headers.get(name), 20, 'ip', 900)
    await expectFetchedError(limited, 'rate_limited', {
      scope: 'ip',
      limit: 20,
      retry_after_seconds: Number(limited.headers.get('retry-after')),
    })
  })
})
