import { Writable } from 'node:stream'
import type { FastifyInstance } from 'fastify'
import pino from 'pino'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { buildApp } from '../../../cloud/app.ts'
import { loadConfig } from '../../../cloud/config.ts'
import { createBlobStore } from '../../../cloud/storage/blob-store.ts'
import { openStorage, type Storage } from '../../../cloud/storage/storage.ts'
import { tempDir } from '../../helpers/temp-dir.ts'
import { startTestCloud, type TestAccount, type TestCloud } from '../test-cloud.ts'
import {
  type BareAccount,
  bareAccount,
  bearer,
  expectFetchedError,
  expectInjectedError,
  field,
  listen,
  UUID,
} from './api-helpers.ts'

// X-Request-Id on every response (spec: Errors, Limits), and on the log lines of the request (docs/operations.md: logs).

const SAFE_128 = `${'a'.repeat(60)}.B_9:-${'z'.repeat(62)}`

describe('X-Request-Id over real HTTP', () => {
  let cloud: TestCloud
  let base: string
  let shop: TestAccount
  let token: string
  beforeAll(async () => {
    cloud = await startTestCloud()
    base = await listen(cloud.app)
    shop = await cloud.createAccount()
    token = await shop.token()
  })
  afterAll(async () => {
    await cloud?.close()
  })

  type Send = (headers: Record<string, string>) => Promise<Response>
  const form = () =>
    new URLSearchParams({
      grant_type: 'client_credentials',
      client_id: shop.clientId,
      client_secret: shop.clientSecret,
    }).toString()
  const cases: [string, Send, number][] = [
    ['a success', (h) => fetch(`${base}/api/v1/printers`, { headers: { ...bearer(token), ...h } }), 200],
    ['a 401', (h) => fetch(`${base}/api/v1/printers`, { headers: h }), 401],
    [
      'a 403',
      async (h) =>
        fetch(`${base}/api/v1/print-jobs`, {
          headers: { ...bearer(await shop.token(['printers:read'])), ...h },
        }),
      403,
    ],
    ['an unknown route (404)', (h) => fetch(`${base}/no/such/route`, { headers: h }), 404],
    [
      'a 422 validation error',
      (h) => fetch(`${base}/api/v1/printers?limit=0`, { headers: { ...bearer(token), ...h } }),
      422,
    ],
    [
      'a 400 for malformed JSON',
      (h) =>
        fetch(`${base}/api/v1/print-jobs`, {
          method: 'POST',
          headers: { ...bearer(token), 'content-type': 'application/json', ...h },
          body: '{"printer_id": ',
        }),
      400,
    ],
    [
      'a 400 for a wrong content type',
      (h) =>
        fetch(`${base}/api/v1/print-jobs`, {
          method: 'POST',
          headers: { ...bearer(token), 'content-type': 'application/xml', ...h },
          body: '<print/>',
        }),
      400,
    ],
    ['the OpenAPI document', (h) => fetch(`${base}/openapi.json`, { headers: h }), 200],
    [
      'a token request',
      (h) =>
        fetch(`${base}/oauth/token`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded', ...h },
          body: form(),
        }),
      200,
    ],
    [
      'a failed token request',
      (h) =>
        fetch(`${base}/oauth/token`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...h },
          body: '{}',
        }),
      400,
    ],
  ]

  it.each(cases)('is generated (a UUID) on %s', async (_what, send, status) => {
    const res = await send({})
    expect(res.status).toBe(status)
    expect(res.headers.get('x-request-id')).toMatch(UUID)
    await res.body?.cancel()
  })

  it('is a different generated id on each response', async () => {
    const ids = new Set<string | null>()
    for (let i = 0; i < 5; i++) {
      const res = await fetch(`${base}/no/such/route`)
      ids.add(res.headers.get('x-request-id'))
      await res.body?.cancel()
    }
    expect(ids.size).toBe(5)
  })

  it.each(cases)("echoes the caller's safe id on %s", async (_what, send, status) => {
    const id = `req-${status}.abc:DEF_1`
    const res = await send({ 'x-request-id': id })
    expect(res.status).toBe(status)
    expect(res.headers.get('x-request-id')).toBe(id)
    await res.body?.cancel()
  })

  it('echoes a safe id of exactly 128 characters', async () => {
    expect(SAFE_128).toHaveLength(128)
    const res = await fetch(`${base}/api/v1/printers`, {
      headers: { ...bearer(token), 'x-request-id': SAFE_128 },
    })
    expect(res.status).toBe(200)
    expect(res.headers.get('x-request-id')).toBe(SAFE_128)
    await res.body?.cancel()
  })

  it.each([
    ['129 characters', `${SAFE_128}x`],
    ['markup', '<script>alert(1)</script>'],
    ['a space', 'abc def'],
    ['a double quote', 'abc"def'],
    ['a slash', 'a/b'],
  ])('replaces an id with %s by a generated UUID', async (_what, id) => {
    const res = await fetch(`${base}/api/v1/printers`, { headers: { ...bearer(token), 'x-request-id': id } })
    expect(res.status).toBe(200)
    const echoed = res.headers.get('x-request-id')
    expect(echoed).toMatch(UUID)
    expect(echoed).not.toBe(id)
    await res.body?.cancel()
  })

  it('replaces an unsafe id on an error response too', async () => {
    const res = await fetch(`${base}/no/such/route`, { headers: { 'x-request-id': '<script>' } })
    expect(res.headers.get('x-request-id')).toMatch(UUID)
    await expectFetchedError(res, 'not_found')
  })

  it('is on the 400 for a path with broken percent-encoding, which answers with the spec error body', async () => {
    const res = await fetch(`${base}/api/v1/print-jobs/%E0%A4%A`, {
      headers: { ...bearer(token), 'x-request-id': 'bad-url-1' },
    })
    expect(res.headers.get('x-request-id')).toBe('bad-url-1')
    expect(res.status).toBe(400)
    await expectFetchedError(res, 'invalid_request')
  })

  it('is on the answer to an over-long print job id, a 422 naming printJobId (spec: 422 id invalid)', async () => {
    const res = await fetch(`${base}/api/v1/print-jobs/${'a'.repeat(150)}`, {
      headers: { ...bearer(token), 'x-request-id': 'long-id-1' },
    })
    expect(res.headers.get('x-request-id')).toBe('long-id-1')
    await expectFetchedError(res, 'validation_failed', { fields: [field('printJobId', 'params')] })
  })
})

describe('the status of a body in a content type the endpoint does not take', () => {
  let cloud: TestCloud
  let shop: TestAccount
  beforeAll(async () => {
    cloud = await startTestCloud()
    shop = await cloud.createAccount()
  })
  afterAll(async () => {
    await cloud?.close()
  })

  // Spec: "JSON for print jobs". Any other body type is refused as such, not parsed and then half-validated.
  it.each([
    ['application/xml', '<print/>'],
    ['text/plain', 'print this'],
    ['application/x-www-form-urlencoded', `printer_id=${'0'.repeat(8)}-0000-4000-8000-${'0'.repeat(12)}`],
  ])('POST /api/v1/print-jobs with %s → 400 unsupported_content_type', async (contentType, payload) => {
    const res = await cloud.app.inject({
      method: 'POST',
      url: '/api/v1/print-jobs',
      headers: { ...bearer(await shop.token()), 'content-type': contentType, 'x-request-id': 'ct-1' },
      payload,
    })
    expect(res.headers['x-request-id']).toBe('ct-1')
    expectInjectedError(res, 'unsupported_content_type')
  })
})

describe('X-Request-Id in the logs', () => {
  let app: FastifyInstance | undefined
  let storage: Storage | undefined
  let removeDir: (() => void) | undefined
  let lines: Record<string, unknown>[]
  let shop: BareAccount

  async function start(): Promise<FastifyInstance> {
    const dir = tempDir('cloud-request-id-')
    removeDir = dir.remove
    const config = loadConfig({ DATA_DIR: dir.path, PUBLIC_URL: 'http://127.0.0.1:8080', LOG_LEVEL: 'info' })
    storage = await openStorage({ dataDir: config.dataDir })
    shop = await bareAccount(storage)
    lines = []
    let pending = ''
    const sink = new Writable({
      write(chunk: Buffer, _encoding, callback) {
        pending += chunk.toString('utf8')
        const complete = pending.split('\n')
        pending = complete.pop() ?? ''
        for (const line of complete)
          if (line.trim() !== '') lines.push(JSON.parse(line) as Record<string, unknown>)
        callback()
      },
    })
    const logger = pino({ level: 'info' }, sink)
    app = await buildApp({
      config,
      storage,
      blobs: createBlobStore(config.dataDir),
      pdfInspector: { inspect: async () => ({ pages: 1 }), close: () => {} },
      logger,
    })
    await app.ready()
    return app
  }

  afterEach(async () => {
    await app?.close()
    await storage?.close()
    removeDir?.()
    app = undefined
    storage = undefined
    removeDir = undefined
  })

  const settle = () => new Promise((resolve) => setImmediate(resolve))

  it("puts the caller's id on every log line of its request", async () => {
    const base = await listen(await start())
    const token = await shop.token()
    const res = await fetch(`${base}/api/v1/printers`, {
      headers: { ...bearer(token), 'x-request-id': 'trace-42.a' },
    })
    expect(res.status).toBe(200)
    await res.body?.cancel()
    await settle()
    const mine = lines.filter((line) => line.request_id === 'trace-42.a')
    expect(mine.length).toBeGreaterThanOrEqual(2)
    expect(mine.map((line) => line.msg)).toEqual(
      expect.arrayContaining(['incoming request', 'request completed']),
    )
    // Every line about this request carries the id: none names the request without it.
    const aboutRequests = lines.filter((line) => line.req !== undefined || line.res !== undefined)
    expect(aboutRequests.every((line) => typeof line.request_id === 'string')).toBe(true)
    // Secrets are never logged.
    expect(JSON.stringify(lines)).not.toContain(token)
  })

  it('puts the generated id on the log lines of a request whose id was unsafe, including error lines', async () => {
    const base = await listen(await start())
    const res = await fetch(`${base}/api/v1/printers`, { headers: { 'x-request-id': '<script>' } })
    expect(res.status).toBe(401)
    const id = res.headers.get('x-request-id')
    expect(id).toMatch(UUID)
    await res.body?.cancel()
    await settle()
    const mine = lines.filter((line) => line.request_id === id)
    expect(mine.length).toBeGreaterThanOrEqual(2)
    expect(mine.some((line) => line.error_code === 'invalid_token')).toBe(true)
    expect(JSON.stringify(lines)).not.toContain('<script>')
  })

  it('does not log the client secret or the issued access token of a token request', async () => {
    const base = await listen(await start())
    const res = await fetch(`${base}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-request-id': 'token-req-1' },
      body: new URLSearchParams({
        grant_type: 'client_credentials',
        client_id: shop.clientId,
        client_secret: shop.clientSecret,
      }).toString(),
    })
    expect(res.status).toBe(200)
    const { access_token } = (await res.json()) as { access_token: string }
    await settle()
    expect(lines.some((line) => line.request_id === 'token-req-1')).toBe(true)
    const logged = JSON.stringify(lines)
    expect(logged).not.toContain(shop.clientSecret)
    expect(logged).not.toContain(access_token)
    expect(logged).not.toContain('client_secret=')
  })
})
