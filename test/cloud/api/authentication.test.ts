import { randomUUID } from 'node:crypto'
import type { InjectOptions } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { generateSecret } from '../../../print-api/secrets.ts'
import type { Scope } from '../../../protocol/enums.ts'
import type { PrintJob } from '../../../protocol/print-job.ts'
import {
  ALL_SCOPES,
  ESCPOS_RECEIPT,
  startTestCloud,
  type TestAccount,
  type TestCloud,
} from '../test-cloud.ts'
import {
  bearer,
  createReceiptJob,
  expectFetchedError,
  expectInjectedError,
  expiredToken,
  field,
  listen,
} from './api-helpers.ts'

// RFC 6750 on every /api/v1 route: 401 for a missing, malformed, unknown or expired token, 403 for a token
// without the route's scope, and one account never reaching another's agents, printers, documents or jobs.

const REALM = 'Bearer realm="print-hub"'
const JOB_ID = randomUUID()

interface RouteCase {
  name: string
  method: 'GET' | 'POST'
  url: string
  scopes: Scope[]
  /** A request body that is invalid for the route (to show that auth runs before validation). */
  invalid?: InjectOptions
}

const json = (payload: unknown): InjectOptions => ({ payload: payload as Record<string, unknown> })

const ROUTES: RouteCase[] = [
  { name: 'GET /api/v1/agents', method: 'GET', url: '/api/v1/agents', scopes: ['printers:read'] },
  { name: 'GET /api/v1/printers', method: 'GET', url: '/api/v1/printers', scopes: ['printers:read'] },
  {
    name: 'POST /api/v1/documents',
    method: 'POST',
    url: '/api/v1/documents',
    scopes: ['documents:write'],
    invalid: json({ not: 'multipart' }),
  },
  {
    name: 'POST /api/v1/print-jobs',
    method: 'POST',
    url: '/api/v1/print-jobs',
    scopes: ['print_jobs:write'],
    invalid: json({ copies: 500 }),
  },
  {
    name: 'POST /api/v1/print-jobs/from-url',
    method: 'POST',
    url: '/api/v1/print-jobs/from-url',
    scopes: ['documents:write', 'print_jobs:write'],
    invalid: json({ document_url: 42 }),
  },
  {
    name: 'POST /api/v1/print-jobs/from-base64',
    method: 'POST',
    url: '/api/v1/print-jobs/from-base64',
    scopes: ['documents:write', 'print_jobs:write'],
    invalid: json({ document_base64: 'data:,x', dpi: 1 }),
  },
  {
    name: 'GET /api/v1/print-jobs/{printJobId}',
    method: 'GET',
    url: `/api/v1/print-jobs/${JOB_ID}`,
    scopes: ['print_jobs:read'],
  },
  { name: 'GET /api/v1/print-jobs', method: 'GET', url: '/api/v1/print-jobs', scopes: ['print_jobs:read'] },
]

/** For the GET routes, an invalid query or path instead of a body. */
const INVALID_GET_URL: Record<string, string> = {
  'GET /api/v1/agents': '/api/v1/agents?limit=0',
  'GET /api/v1/printers': '/api/v1/printers?limit=abc',
  'GET /api/v1/print-jobs/{printJobId}': '/api/v1/print-jobs/not-a-uuid',
  'GET /api/v1/print-jobs': '/api/v1/print-jobs?status=done',
}

let cloud: TestCloud
let a: TestAccount
let b: TestAccount
beforeAll(async () => {
  cloud = await startTestCloud()
  a = await cloud.createAccount('Shop A')
  b = await cloud.createAccount('Shop B')
})
afterAll(async () => {
  await cloud?.close()
})

const call = (route: RouteCase, headers: Record<string, string>, extra: InjectOptions = {}) =>
  cloud.app.inject({ method: route.method, url: route.url, headers, ...extra })

describe.each(ROUTES)('$name', (route) => {
  it('without a token → 401 invalid_token with the bare challenge WWW-Authenticate: Bearer realm="print-hub"', async () => {
    const res = await call(route, {})
    expect(res.headers['www-authenticate']).toBe(REALM)
    expectInjectedError(res, 'invalid_token')
  })

  it('with an empty Authorization header → 401 invalid_token', async () => {
    const res = await call(route, { authorization: '' })
    expect(res.headers['www-authenticate']).toBe(REALM)
    expectInjectedError(res, 'invalid_token')
  })

  it.each([
    ['a Bearer token with a space inside', `Bearer ${generateSecret('pat')} extra`],
    ['another scheme (Basic)', 'Basic xxx'],
    ['the scheme without a token', 'Bearer'],
  ])('with %s → 401 error="invalid_token"', async (_what, authorization) => {
    const res = await call(route, { authorization })
    expect(res.headers['www-authenticate']).toMatch(/^Bearer realm="print-hub", /)
    expect(res.headers['www-authenticate']).toContain('error="invalid_token"')
    expectInjectedError(res, 'invalid_token')
  })

  it('with an unknown token → 401 error="invalid_token"', async () => {
    const res = await call(route, bearer(generateSecret('pat')))
    expect(res.headers['www-authenticate']).toMatch(/^Bearer realm="print-hub", /)
    expect(res.headers['www-authenticate']).toContain('error="invalid_token"')
    expectInjectedError(res, 'invalid_token')
  })

  it('with an expired token → 401 error="invalid_token"', async () => {
    const res = await call(route, bearer(await expiredToken(cloud.storage, a.accountId, a.clientId)))
    expect(res.headers['www-authenticate']).toMatch(/^Bearer realm="print-hub", /)
    expect(res.headers['www-authenticate']).toContain('error="invalid_token"')
    expectInjectedError(res, 'invalid_token')
  })

  it(`with a token lacking ${route.scopes.join(' and ')} → 403 insufficient_scope naming it`, async () => {
    const others = ALL_SCOPES.filter((s) => !route.scopes.includes(s))
    const res = await call(route, bearer(await a.token(others)))
    expect(res.headers['www-authenticate']).toBe(
      `Bearer realm="print-hub", error="insufficient_scope", scope="${route.scopes.join(' ')}"`,
    )
    expectInjectedError(res, 'insufficient_scope', {
      required_scopes: route.scopes,
      missing_scopes: route.scopes,
    })
  })

  it('checks authentication before the request is validated (an invalid request without a token → 401)', async () => {
    const res =
      route.method === 'GET'
        ? await cloud.app.inject({ method: 'GET', url: INVALID_GET_URL[route.name] })
        : await call(route, {}, route.invalid)
    expect(res.headers['www-authenticate']).toBe(REALM)
    expectInjectedError(res, 'invalid_token')
  })

  it('checks the scope before the request is validated (an invalid request with a token lacking it → 403)', async () => {
    const token = await a.token(ALL_SCOPES.filter((s) => !route.scopes.includes(s)))
    const res =
      route.method === 'GET'
        ? await cloud.app.inject({ method: 'GET', url: INVALID_GET_URL[route.name], headers: bearer(token) })
        : await call(route, bearer(token), route.invalid)
    expectInjectedError(res, 'insufficient_scope', {
      required_scopes: route.scopes,
      missing_scopes: route.scopes,
    })
  })
})

describe('the two scopes of from-base64 and from-url', () => {
  const shortcuts = ['/api/v1/print-jobs/from-base64', '/api/v1/print-jobs/from-url']
  const body = (url: string) =>
    url.endsWith('from-base64')
      ? {
          document_base64: ESCPOS_RECEIPT.toString('base64'),
          document_format: 'raw',
          document_raw_language: 'escpos',
          printer_id: a.receiptPrinterId,
        }
      : { document_url: 'https://docs.example.com/receipt.bin', printer_id: a.receiptPrinterId }

  it.each(shortcuts)(
    '%s with print_jobs:write but not documents:write → 403 naming documents:write',
    async (url) => {
      const res = await cloud.app.inject({
        method: 'POST',
        url,
        headers: bearer(await a.token(['print_jobs:write', 'print_jobs:read', 'printers:read'])),
        payload: body(url),
      })
      expectInjectedError(res, 'insufficient_scope', {
        required_scopes: ['documents:write', 'print_jobs:write'],
        missing_scopes: ['documents:write'],
      })
    },
  )

  it.each(shortcuts)(
    '%s with documents:write but not print_jobs:write → 403 naming print_jobs:write',
    async (url) => {
      const res = await cloud.app.inject({
        method: 'POST',
        url,
        headers: bearer(await a.token(['documents:write', 'print_jobs:read', 'printers:read'])),
        payload: body(url),
      })
      expectInjectedError(res, 'insufficient_scope', {
        required_scopes: ['documents:write', 'print_jobs:write'],
        missing_scopes: ['print_jobs:write'],
      })
    },
  )

  it('from-base64 with exactly documents:write and print_jobs:write → 201', async () => {
    const res = await cloud.app.inject({
      method: 'POST',
      url: '/api/v1/print-jobs/from-base64',
      headers: bearer(await a.token(['documents:write', 'print_jobs:write'])),
      payload: body('/api/v1/print-jobs/from-base64'),
    })
    expect(res.statusCode, res.body).toBe(201)
    expect(res.json()).toMatchObject({ printer_id: a.receiptPrinterId, status: 'pending' })
  })
})

describe('the token itself', () => {
  it('accepts the auth scheme in any case (RFC 7235 §2.1: "bearer")', async () => {
    const res = await cloud.app.inject({
      method: 'GET',
      url: '/api/v1/agents',
      headers: { authorization: `bearer ${await a.token()}` },
    })
    expect(res.statusCode).toBe(200)
  })

  it('a token with only printers:read reads lists but cannot read jobs', async () => {
    const token = await a.token(['printers:read'])
    const ok = await cloud.app.inject({ method: 'GET', url: '/api/v1/printers', headers: bearer(token) })
    expect(ok.statusCode).toBe(200)
    const res = await cloud.app.inject({
      method: 'GET',
      url: `/api/v1/print-jobs/${JOB_ID}`,
      headers: bearer(token),
    })
    expectInjectedError(res, 'insufficient_scope', {
      required_scopes: ['print_jobs:read'],
      missing_scopes: ['print_jobs:read'],
    })
  })

  it('over real HTTP, 401 carries the challenge and the error body', async () => {
    const base = await listen(cloud.app)
    const missing = await fetch(`${base}/api/v1/printers`)
    expect(missing.headers.get('www-authenticate')).toBe(REALM)
    await expectFetchedError(missing, 'invalid_token')
    const unknown = await fetch(`${base}/api/v1/printers`, { headers: bearer(generateSecret('pat')) })
    expect(unknown.headers.get('www-authenticate')).toContain('error="invalid_token"')
    await expectFetchedError(unknown, 'invalid_token')
  })
})

describe('cross-account isolation', () => {
  let jobOfA: PrintJob
  beforeAll(async () => {
    jobOfA = await createReceiptJob(cloud, await a.token(), a.receiptPrinterId)
  })

  it("B's agent list holds only B's agents", async () => {
    const res = await cloud.app.inject({
      method: 'GET',
      url: '/api/v1/agents',
      headers: bearer(await b.token()),
    })
    expect(res.statusCode).toBe(200)
    const body = res.json() as { data: { agent_id: string }[]; next_cursor: string | null }
    expect(body.data.map((agent) => agent.agent_id)).toEqual([b.agentId])
    expect(body.next_cursor).toBeNull()
  })

  it("B's printer list holds only B's printers", async () => {
    const res = await cloud.app.inject({
      method: 'GET',
      url: '/api/v1/printers',
      headers: bearer(await b.token()),
    })
    expect(res.statusCode).toBe(200)
    const body = res.json() as {
      data: { printer_id: string; agent_id: string }[]
      next_cursor: string | null
    }
    expect(body.data.map((p) => p.printer_id)).toEqual([b.labelPrinterId, b.receiptPrinterId])
    expect(body.data.every((p) => p.agent_id === b.agentId)).toBe(true)
    expect(body.next_cursor).toBeNull()
  })

  it("A's job id answers 404 print_job_not_found for B (not 403), and 200 for A", async () => {
    const res = await cloud.app.inject({
      method: 'GET',
      url: `/api/v1/print-jobs/${jobOfA.print_job_id}`,
      headers: bearer(await b.token()),
    })
    expect(res.headers['www-authenticate']).toBeUndefined()
    expectInjectedError(res, 'print_job_not_found')
    const own = await cloud.app.inject({
      method: 'GET',
      url: `/api/v1/print-jobs/${jobOfA.print_job_id}`,
      headers: bearer(await a.token()),
    })
    expect(own.statusCode).toBe(200)
    expect(own.json()).toStrictEqual(jobOfA)
  })

  it("B's job list does not hold A's job, and A's job id is no cursor for B", async () => {
    const res = await cloud.app.inject({
      method: 'GET',
      url: '/api/v1/print-jobs',
      headers: bearer(await b.token()),
    })
    expect(res.statusCode).toBe(200)
    expect(res.json()).toStrictEqual({ data: [], next_cursor: null })
    const cursor = await cloud.app.inject({
      method: 'GET',
      url: `/api/v1/print-jobs?cursor=${jobOfA.print_job_id}`,
      headers: bearer(await b.token()),
    })
    expectInjectedError(cursor, 'validation_failed', { fields: [field('cursor', 'querystring')] })
  })

  it("B filtering its job list by A's printer gets an empty page", async () => {
    const res = await cloud.app.inject({
      method: 'GET',
      url: `/api/v1/print-jobs?printer_id=${a.receiptPrinterId}`,
      headers: bearer(await b.token()),
    })
    expect(res.statusCode).toBe(200)
    expect(res.json()).toStrictEqual({ data: [], next_cursor: null })
  })

  it("B cannot create a job on A's printer: 422 validation_failed naming printer_id", async () => {
    const res = await cloud.app.inject({
      method: 'POST',
      url: '/api/v1/print-jobs/from-base64',
      headers: bearer(await b.token()),
      payload: {
        document_base64: ESCPOS_RECEIPT.toString('base64'),
        document_format: 'raw',
        document_raw_language: 'escpos',
        printer_id: a.receiptPrinterId,
      },
    })
    expectInjectedError(res, 'validation_failed', { fields: [field('printer_id', 'body')] })
  })

  it("B cannot create a job on A's printer through POST /api/v1/print-jobs either", async () => {
    const ownDocument = (await createReceiptJob(cloud, await b.token(), b.receiptPrinterId)).document_id
    const res = await cloud.app.inject({
      method: 'POST',
      url: '/api/v1/print-jobs',
      headers: bearer(await b.token()),
      payload: { document_id: ownDocument, printer_id: a.receiptPrinterId },
    })
    expectInjectedError(res, 'validation_failed', { fields: [field('printer_id', 'body')] })
  })

  it("B cannot print A's document: 422 validation_failed naming document_id", async () => {
    const res = await cloud.app.inject({
      method: 'POST',
      url: '/api/v1/print-jobs',
      headers: bearer(await b.token()),
      payload: { document_id: jobOfA.document_id, printer_id: b.receiptPrinterId },
    })
    expectInjectedError(res, 'validation_failed', { fields: [field('document_id', 'body')] })
  })

  it("A can print its own document again on its printer (the document id is A's)", async () => {
    const res = await cloud.app.inject({
      method: 'POST',
      url: '/api/v1/print-jobs',
      headers: bearer(await a.token()),
      payload: { document_id: jobOfA.document_id, printer_id: a.receiptPrinterId },
    })
    expect(res.statusCode, res.body).toBe(201)
    expect(res.json()).toMatchObject({ document_id: jobOfA.document_id, printer_id: a.receiptPrinterId })
  })
})
