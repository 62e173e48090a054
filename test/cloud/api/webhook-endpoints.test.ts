import { randomBytes, randomUUID } from 'node:crypto'
import { existsSync } from 'node:fs'
import path from 'node:path'
import Database from 'better-sqlite3'
import type { LightMyRequestResponse } from 'fastify'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { loadConfig } from '../../../cloud/config.ts'
import { WEBHOOK_KEY_FILE, webhookSecretBox, webhookSecretKey } from '../../../cloud/webhooks/secret-box.ts'
import { SCOPES } from '../../../protocol/enums.ts'
import { WEBHOOK_EVENT_TYPES, WEBHOOK_LIMITS, type WebhookEndpoint } from '../../../protocol/webhooks.ts'
import { startTestCloud, type TestCloud } from '../test-cloud.ts'
import {
  type BareAccount,
  bareAccount,
  bearer,
  expectInjectedError,
  field,
  ISO_DATE_TIME,
  UUID,
} from './api-helpers.ts'

// /api/v1/webhook-endpoints and /api/v1/webhook-deliveries (scope webhooks:write) on SQLite storage.

const SECRET = /^whsec_[A-Za-z0-9+/]{43}=$/
const BASE = '/api/v1/webhook-endpoints'
const CLAIM = { limit: 50, perEndpoint: 10, leaseMs: 30_000 }

let cloud: TestCloud
let shop: BareAccount
let token: string
beforeEach(async () => {
  cloud = await startTestCloud()
  shop = await bareAccount(cloud.storage, 'Webhook shop', [...SCOPES])
  token = await shop.token(['webhooks:write'])
})
afterEach(async () => {
  await cloud?.close()
})

type Method = 'GET' | 'POST' | 'PATCH' | 'DELETE'
const call = (method: Method, url: string, payload?: unknown, headers: Record<string, string> = {}) =>
  cloud.app.inject({
    method,
    url,
    headers: { ...bearer(token), ...headers },
    ...(payload !== undefined && { payload: payload as Record<string, unknown> }),
  })

const create = async (body: Record<string, unknown> = {}) => {
  const res = await call('POST', BASE, {
    url: 'https://hooks.example.com/print',
    event_types: ['print_job.printed', 'print_job.failed'],
    ...body,
  })
  expect(res.statusCode, res.body).toBe(201)
  return res.json() as WebhookEndpoint & { secret: string }
}

const box = () => webhookSecretBox(webhookSecretKey(undefined, cloud.dataDir))
/** What the delivery worker would get for the endpoint's due deliveries: the secrets, opened. */
const claimedSecrets = async (endpointId: string) => {
  const claims = await cloud.storage.webhooks.claimDue(Date.now() + 1000, CLAIM)
  const claim = claims.find((c) => c.endpointId === endpointId)
  if (!claim) throw new Error('nothing due for the endpoint')
  return { claim, secrets: claim.sealedSecrets.map((s) => box().open(s, endpointId)) }
}

function expectNoStore(res: LightMyRequestResponse) {
  expect(res.headers['cache-control']).toBe('private, no-store')
}

describe('create, read, list', () => {
  it('creates an enabled endpoint and shows its secret once: 201, exactly the documented body', async () => {
    const res = await call('POST', BASE, {
      url: 'https://hooks.example.com/print?shop=1',
      event_types: ['print_job.printed', 'printer.offline'],
      description: 'Till system',
    })
    expect(res.statusCode, res.body).toBe(201)
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8')
    expectNoStore(res)
    const body = res.json()
    expect(body).toStrictEqual({
      webhook_endpoint_id: expect.stringMatching(UUID),
      url: 'https://hooks.example.com/print?shop=1',
      event_types: ['print_job.printed', 'printer.offline'],
      description: 'Till system',
      enabled: true,
      disabled_reason: null,
      disabled_at: null,
      failing_since: null,
      created_at: expect.stringMatching(ISO_DATE_TIME),
      updated_at: body.created_at,
      secret: expect.stringMatching(SECRET),
    })
    const { secret, ...endpoint } = body

    const got = await call('GET', `${BASE}/${endpoint.webhook_endpoint_id}`)
    expect(got.statusCode).toBe(200)
    expect(got.json()).toStrictEqual(endpoint)
    expect(got.body).not.toContain(secret)
    const listed = await call('GET', BASE)
    expect(listed.statusCode).toBe(200)
    expect(listed.json()).toStrictEqual({ data: [endpoint], next_cursor: null })
    expect(listed.body).not.toContain('whsec_')

    // The secret is kept sealed to the endpoint (never as it was shown), and opens to the one shown.
    const test = await call('POST', `${BASE}/${endpoint.webhook_endpoint_id}/test`)
    expect(test.statusCode).toBe(202)
    const { claim, secrets } = await claimedSecrets(endpoint.webhook_endpoint_id)
    expect(claim.sealedSecrets[0]).not.toContain(secret)
    expect(secrets).toStrictEqual([secret])
  })

  it('makes a new secret for each endpoint; description defaults to null', async () => {
    const a = await create()
    const b = await create()
    expect(a.secret).not.toBe(b.secret)
    expect(a.description).toBeNull()
    const listed = await call('GET', BASE)
    expect(
      (listed.json() as { data: WebhookEndpoint[] }).data.map((e) => e.webhook_endpoint_id),
    ).toStrictEqual([a.webhook_endpoint_id, b.webhook_endpoint_id])
  })

  it('replays a create with the same Idempotency-Key (secret included) without keeping the secret in clear', async () => {
    const body = { url: 'https://hooks.example.com/a', event_types: ['agent.offline'] }
    const first = await call('POST', BASE, body, { 'idempotency-key': 'endpoint-1' })
    expect(first.statusCode).toBe(201)
    const again = await call('POST', BASE, body, { 'idempotency-key': 'endpoint-1' })
    expect(again.statusCode).toBe(201)
    expect(again.headers['idempotent-replayed']).toBe('true')
    expectNoStore(again)
    expect(again.json()).toStrictEqual(first.json())
    expect((await call('GET', BASE)).json().data).toHaveLength(1)
    const other = await call(
      'POST',
      BASE,
      { ...body, url: 'https://hooks.example.com/b' },
      {
        'idempotency-key': 'endpoint-1',
      },
    )
    expectInjectedError(other, 'idempotency_key_conflict')
    // The kept answer is sealed under the key, which is kept as a digest only.
    const sqlite = new Database(path.join(cloud.dataDir, 'cloud.sqlite'), { readonly: true })
    try {
      const rows = JSON.stringify(sqlite.prepare('SELECT * FROM idempotency_keys').all())
      expect(rows).toContain('sealed:v1:')
      expect(rows).not.toContain(first.json().secret)
      expect(rows).not.toContain('endpoint-1')
    } finally {
      sqlite.close()
    }
  })
})

describe('validation (422 naming the field, before anything is stored)', () => {
  const refusedUrls: [string, string][] = [
    ['http://hooks.example.com/print', 'plain http'],
    ['https://127.0.0.1/hook', 'loopback'],
    ['https://[::1]/hook', 'IPv6 loopback'],
    ['https://10.1.2.3/hook', 'private'],
    ['https://192.168.1.10:8443/hook', 'private with a port'],
    ['https://169.254.169.254/latest/meta-data', 'link-local (cloud metadata)'],
    ['https://[fe80::1]/hook', 'IPv6 link-local'],
    ['https://2130706433/hook', 'loopback spelt as a number'],
    ['https://localhost/hook', 'localhost'],
    ['https://printer.local/hook', 'an mDNS name'],
    ['https://user:pw@hooks.example.com/hook', 'credentials'],
  ]
  it.each(refusedUrls)('refuses %s (%s) on create and on change', async (url) => {
    const res = await call('POST', BASE, { url, event_types: ['print_job.printed'] })
    expectInjectedError(res, 'validation_failed', { fields: [field('url', 'body')] })
    expect((await call('GET', BASE)).json().data).toStrictEqual([])
    const endpoint = await create()
    const patched = await call('PATCH', `${BASE}/${endpoint.webhook_endpoint_id}`, { url })
    expectInjectedError(patched, 'validation_failed', { fields: [field('url', 'body')] })
    const after = await call('GET', `${BASE}/${endpoint.webhook_endpoint_id}`)
    expect(after.json().url).toBe('https://hooks.example.com/print')
  })

  it('says why an address is refused', async () => {
    const res = await call('POST', BASE, { url: 'https://10.0.0.8/hook', event_types: ['agent.online'] })
    expect(res.json().details.fields[0].message).toBe('names a private address; it must be public')
  })

  it('refuses an unknown or repeated event type, none, and a description over the limit', async () => {
    const post = (body: Record<string, unknown>) =>
      call('POST', BASE, { url: 'https://hooks.example.com/x', event_types: ['agent.online'], ...body })
    expectInjectedError(await post({ event_types: ['print_job.exploded'] }), 'validation_failed', {
      fields: [field('event_types.0', 'body')],
    })
    expectInjectedError(await post({ event_types: ['webhook.test'] }), 'validation_failed', {
      fields: [field('event_types.0', 'body')],
    })
    expectInjectedError(await post({ event_types: [] }), 'validation_failed', {
      fields: [field('event_types', 'body')],
    })
    expectInjectedError(await post({ event_types: ['agent.online', 'agent.online'] }), 'validation_failed', {
      fields: [field('event_types', 'body')],
    })
    expectInjectedError(
      await post({ description: 'd'.repeat(WEBHOOK_LIMITS.descriptionMaxLength + 1) }),
      'validation_failed',
      { fields: [field('description', 'body')] },
    )
    expect((await post({ description: 'd'.repeat(WEBHOOK_LIMITS.descriptionMaxLength) })).statusCode).toBe(
      201,
    )
    expectInjectedError(await post({ secret: 'whsec_mine' }), 'validation_failed', {
      fields: [field('secret', 'body')],
    })
  })

  it('accepts every documented event type', async () => {
    const endpoint = await create({ event_types: [...WEBHOOK_EVENT_TYPES] })
    expect(endpoint.event_types).toStrictEqual([...WEBHOOK_EVENT_TYPES])
  })

  it(`refuses endpoint number ${WEBHOOK_LIMITS.endpointsPerAccount + 1} with 409 webhook_endpoint_limit_reached`, async () => {
    for (let i = 0; i < WEBHOOK_LIMITS.endpointsPerAccount; i++) await create()
    const res = await call('POST', BASE, {
      url: 'https://hooks.example.com/21',
      event_types: ['agent.online'],
    })
    expectInjectedError(res, 'webhook_endpoint_limit_reached', { limit: WEBHOOK_LIMITS.endpointsPerAccount })
    // Another account has its own allowance.
    const other = await bareAccount(cloud.storage, 'Other shop', ['webhooks:write'])
    const theirs = await cloud.app.inject({
      method: 'POST',
      url: BASE,
      headers: bearer(await other.token()),
      payload: { url: 'https://hooks.example.com/theirs', event_types: ['agent.online'] },
    })
    expect(theirs.statusCode).toBe(201)
  })

  it('refuses an empty change, a malformed id and an unknown cursor', async () => {
    const endpoint = await create()
    expectInjectedError(
      await call('PATCH', `${BASE}/${endpoint.webhook_endpoint_id}`, {}),
      'validation_failed',
      { fields: [field('body', 'body')] },
    )
    expectInjectedError(await call('GET', `${BASE}/not-a-uuid`), 'validation_failed', {
      fields: [field('webhookEndpointId', 'params')],
    })
    expectInjectedError(
      await call('GET', `${BASE}/${endpoint.webhook_endpoint_id}/deliveries?cursor=${randomUUID()}`),
      'validation_failed',
      { fields: [field('cursor', 'querystring')] },
    )
  })
})

describe('change, pause, delete', () => {
  it('changes what is given and keeps the rest; a pause shows why, enabling clears it', async () => {
    const endpoint = await create({ description: 'Till' })
    const url = `${BASE}/${endpoint.webhook_endpoint_id}`
    const changed = await call('PATCH', url, { event_types: ['agent.offline'], description: null })
    expect(changed.statusCode, changed.body).toBe(200)
    expect(changed.json()).toMatchObject({
      url: 'https://hooks.example.com/print',
      event_types: ['agent.offline'],
      description: null,
      enabled: true,
    })
    expect(changed.json()).not.toHaveProperty('secret')

    const paused = await call('PATCH', url, { enabled: false })
    expect(paused.json()).toMatchObject({
      enabled: false,
      disabled_reason: 'paused',
      disabled_at: expect.stringMatching(ISO_DATE_TIME),
    })
    expectInjectedError(await call('POST', `${url}/test`), 'webhook_endpoint_disabled', {
      disabled_reason: 'paused',
    })
    const enabled = await call('PATCH', url, { enabled: true, url: 'https://hooks.example.com/v2' })
    expect(enabled.json()).toMatchObject({
      url: 'https://hooks.example.com/v2',
      enabled: true,
      disabled_reason: null,
      disabled_at: null,
      failing_since: null,
    })
  })

  it('deletes an endpoint: 204 without a body, then 404', async () => {
    const endpoint = await create()
    const url = `${BASE}/${endpoint.webhook_endpoint_id}`
    const res = await call('DELETE', url)
    expect(res.statusCode).toBe(204)
    expect(res.body).toBe('')
    expectInjectedError(await call('GET', url), 'webhook_endpoint_not_found')
    expectInjectedError(await call('DELETE', url), 'webhook_endpoint_not_found')
  })
})

describe('secrets', () => {
  it('rotates: a new secret shown once, the old one still signing for the hours asked', async () => {
    const endpoint = await create()
    const url = `${BASE}/${endpoint.webhook_endpoint_id}`
    const rotated = await call('POST', `${url}/rotate-secret`)
    expect(rotated.statusCode, rotated.body).toBe(200)
    expectNoStore(rotated)
    const { secret, ...rest } = rotated.json()
    expect(secret).toMatch(SECRET)
    expect(secret).not.toBe(endpoint.secret)
    expect(rest.webhook_endpoint_id).toBe(endpoint.webhook_endpoint_id)
    expect((await call('GET', url)).body).not.toContain('whsec_')

    await call('POST', `${url}/test`)
    expect((await claimedSecrets(endpoint.webhook_endpoint_id)).secrets).toStrictEqual([
      secret,
      endpoint.secret,
    ])
  })

  it('rotates with previous_secret_valid_hours 0: the old secret is dropped at once', async () => {
    const endpoint = await create()
    const url = `${BASE}/${endpoint.webhook_endpoint_id}`
    const rotated = await call('POST', `${url}/rotate-secret`, { previous_secret_valid_hours: 0 })
    expect(rotated.statusCode).toBe(200)
    await call('POST', `${url}/test`)
    expect((await claimedSecrets(endpoint.webhook_endpoint_id)).secrets).toStrictEqual([
      rotated.json().secret,
    ])
    expectInjectedError(
      await call('POST', `${url}/rotate-secret`, { previous_secret_valid_hours: 169 }),
      'validation_failed',
      { fields: [field('previous_secret_valid_hours', 'body')] },
    )
  })
})

describe('deliveries', () => {
  it('sends a test event: a pending delivery, listed newest first, with no attempts yet', async () => {
    const endpoint = await create()
    const url = `${BASE}/${endpoint.webhook_endpoint_id}`
    const first = await call('POST', `${url}/test`)
    expect(first.statusCode, first.body).toBe(202)
    expect(first.json()).toStrictEqual({
      webhook_delivery_id: expect.stringMatching(UUID),
      webhook_endpoint_id: endpoint.webhook_endpoint_id,
      event_id: expect.stringMatching(UUID),
      event_type: 'webhook.test',
      state: 'pending',
      attempts: 0,
      next_attempt_at: expect.stringMatching(ISO_DATE_TIME),
      created_at: expect.stringMatching(ISO_DATE_TIME),
      delivered_at: null,
    })
    const second = (await call('POST', `${url}/test`)).json()
    const listed = await call('GET', `${url}/deliveries`)
    expect(listed.statusCode).toBe(200)
    expect(listed.json()).toStrictEqual({ data: [second, first.json()], next_cursor: null })
    const paged = (await call('GET', `${url}/deliveries?limit=1`)).json()
    expect(paged).toStrictEqual({ data: [second], next_cursor: second.webhook_delivery_id })
    const next = (await call('GET', `${url}/deliveries?limit=1&cursor=${paged.next_cursor}`)).json()
    expect(next.data).toStrictEqual([first.json()])
    const attempts = await call('GET', `/api/v1/webhook-deliveries/${second.webhook_delivery_id}/attempts`)
    expect(attempts.statusCode).toBe(200)
    expect(attempts.json()).toStrictEqual({ data: [] })
  })

  it('lists each attempt with its status, duration and error, and sends a delivery again by hand', async () => {
    const endpoint = await create()
    const test = (await call('POST', `${BASE}/${endpoint.webhook_endpoint_id}/test`)).json()
    const { claim } = await claimedSecrets(endpoint.webhook_endpoint_id)
    const attempt = {
      attempt: 1,
      attempted_at: new Date().toISOString(),
      duration_ms: 412,
      status_code: 500,
      error: 'the endpoint answered 500',
    }
    await cloud.storage.webhooks.recordAttempt(claim, attempt, {
      state: 'failed',
      disableIfFailingSince: '2000-01-01T00:00:00.000Z',
      at: attempt.attempted_at,
    })
    const attemptsUrl = `/api/v1/webhook-deliveries/${test.webhook_delivery_id}/attempts`
    expect((await call('GET', attemptsUrl)).json()).toStrictEqual({ data: [attempt] })
    const failed = (await call('GET', `${BASE}/${endpoint.webhook_endpoint_id}/deliveries`)).json().data[0]
    expect(failed).toMatchObject({ state: 'failed', attempts: 1, next_attempt_at: null })

    const again = await call('POST', `/api/v1/webhook-deliveries/${test.webhook_delivery_id}/redeliver`)
    expect(again.statusCode, again.body).toBe(202)
    expect(again.json()).toStrictEqual({
      ...test,
      state: 'pending',
      attempts: 1,
      next_attempt_at: expect.stringMatching(ISO_DATE_TIME),
    })
    const { claim: reclaimed } = await claimedSecrets(endpoint.webhook_endpoint_id)
    expect(reclaimed).toMatchObject({ deliveryId: test.webhook_delivery_id, attempts: 1 })
  })

  it('does not send again to a paused endpoint', async () => {
    const endpoint = await create()
    const test = (await call('POST', `${BASE}/${endpoint.webhook_endpoint_id}/test`)).json()
    await call('PATCH', `${BASE}/${endpoint.webhook_endpoint_id}`, { enabled: false })
    expectInjectedError(
      await call('POST', `/api/v1/webhook-deliveries/${test.webhook_delivery_id}/redeliver`),
      'webhook_endpoint_disabled',
      { disabled_reason: 'paused' },
    )
  })
})

describe('access', () => {
  const routes = (endpointId: string, deliveryId: string): [Method, string, unknown?][] => [
    ['POST', BASE, { url: 'https://hooks.example.com/x', event_types: ['agent.online'] }],
    ['GET', BASE],
    ['GET', `${BASE}/${endpointId}`],
    ['PATCH', `${BASE}/${endpointId}`, { description: 'x' }],
    ['DELETE', `${BASE}/${endpointId}`],
    ['POST', `${BASE}/${endpointId}/rotate-secret`, {}],
    ['POST', `${BASE}/${endpointId}/test`],
    ['GET', `${BASE}/${endpointId}/deliveries`],
    ['GET', `/api/v1/webhook-deliveries/${deliveryId}/attempts`],
    ['POST', `/api/v1/webhook-deliveries/${deliveryId}/redeliver`],
  ]

  it('answers 403 insufficient_scope to a token without webhooks:write, and 401 without a token', async () => {
    const endpoint = await create()
    const delivery = (await call('POST', `${BASE}/${endpoint.webhook_endpoint_id}/test`)).json()
    const weak = await shop.token(SCOPES.filter((s) => s !== 'webhooks:write'))
    for (const [method, url, payload] of routes(endpoint.webhook_endpoint_id, delivery.webhook_delivery_id)) {
      const res = await call(method, url, payload, bearer(weak))
      expect(res.headers['www-authenticate'], `${method} ${url}`).toBe(
        'Bearer realm="print-hub", error="insufficient_scope", scope="webhooks:write"',
      )
      expectInjectedError(res, 'insufficient_scope', {
        required_scopes: ['webhooks:write'],
        missing_scopes: ['webhooks:write'],
      })
      const anonymous = await cloud.app.inject({
        method,
        url,
        ...(payload !== undefined && { payload: payload as Record<string, unknown> }),
      })
      expectInjectedError(anonymous, 'invalid_token')
    }
    // Nothing changed.
    expect((await call('GET', BASE)).json().data).toHaveLength(1)
  })

  it("never shows or touches another account's endpoints and deliveries (404 as for unknown ids)", async () => {
    const endpoint = await create()
    const delivery = (await call('POST', `${BASE}/${endpoint.webhook_endpoint_id}/test`)).json()
    const other = await bareAccount(cloud.storage, 'Other shop', ['webhooks:write'])
    const theirs = await other.token()
    expect((await call('GET', BASE, undefined, bearer(theirs))).json()).toStrictEqual({
      data: [],
      next_cursor: null,
    })
    for (const [method, url, payload] of routes(endpoint.webhook_endpoint_id, delivery.webhook_delivery_id)) {
      if (url === BASE) continue
      const res = await call(method, url, payload, bearer(theirs))
      const code = url.startsWith('/api/v1/webhook-deliveries')
        ? 'webhook_delivery_not_found'
        : 'webhook_endpoint_not_found'
      expectInjectedError(res, code)
    }
    for (const [method, url, payload] of routes(randomUUID(), randomUUID())) {
      if (url === BASE) continue
      const res = await call(method, url, payload)
      expect(res.statusCode, `${method} ${url}`).toBe(404)
    }
    // Still there, unchanged, for its own account.
    const mine = await call('GET', `${BASE}/${endpoint.webhook_endpoint_id}`)
    expect(mine.json()).toMatchObject({ description: null, enabled: true })
    expect(
      (await call('GET', `${BASE}/${endpoint.webhook_endpoint_id}/deliveries`)).json().data,
    ).toHaveLength(1)
  })
})

describe('WEBHOOK_SECRET_KEY', () => {
  it('seals secrets under the configured key (no key file is made) and refuses a key that is not 32 bytes', async () => {
    const key = randomBytes(32).toString('base64')
    const keyed = await startTestCloud({ env: { WEBHOOK_SECRET_KEY: key } })
    try {
      const account = await bareAccount(keyed.storage, 'Keyed shop', ['webhooks:write'])
      const res = await keyed.app.inject({
        method: 'POST',
        url: `${BASE}`,
        headers: bearer(await account.token()),
        payload: { url: 'https://hooks.example.com/keyed', event_types: ['agent.online'] },
      })
      expect(res.statusCode).toBe(201)
      const { webhook_endpoint_id: id, secret } = res.json()
      await keyed.storage.webhooks.enqueueTest(account.accountId, id, Date.now())
      const claim = (await keyed.storage.webhooks.claimDue(Date.now() + 1000, CLAIM))[0]
      const opened = webhookSecretBox(Buffer.from(key, 'base64')).open(claim!.sealedSecrets[0]!, id)
      expect(opened).toBe(secret)
      expect(existsSync(path.join(keyed.dataDir, WEBHOOK_KEY_FILE))).toBe(false)
    } finally {
      await keyed.close()
    }
    expect(() =>
      loadConfig({ DATA_DIR: cloud.dataDir, WEBHOOK_SECRET_KEY: randomBytes(16).toString('base64') }),
    ).toThrow(/WEBHOOK_SECRET_KEY/)
  })
})
