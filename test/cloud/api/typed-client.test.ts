import { randomUUID } from 'node:crypto'
import { readFileSync } from 'node:fs'
import type { LightMyRequestResponse } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { connectTls } from '../../../cloud/fetch/safe-fetch.ts'
import { generateSecret, hashSecret } from '../../../print-api/secrets.ts'
import { tempDir } from '../../helpers/temp-dir.ts'
import { makeCertificate, startHttpsServer, type TestServer } from '../fetch/tls-fixture.ts'
import {
  ESCPOS_RECEIPT,
  RECEIPT_PRINTER,
  startTestCloud,
  type TestAccount,
  type TestCloud,
} from '../test-cloud.ts'
import { createReceiptJob, listen } from './api-helpers.ts'
import { PrintServiceBackend, PrintServiceError } from './typed-client/backend.ts'
import { contractChecker } from './typed-client/contract-check.ts'
import {
  BACKEND_FILE,
  escapeHatches,
  generateTypes,
  TILL_EXAMPLE_FILE,
  typeCheckBackend,
} from './typed-client/generated-types.ts'

// Point 10 of issue 7: types generated from the served /openapi.json with openapi-typescript, a backend
// written with openapi-fetch (typed-client/backend.ts) type-checked against them, and every answer it gets
// checked against the document's own schemas. The URL document comes from a real HTTPS server on loopback,
// reached through the cloud's fetch seams as a public name.

let cloud: TestCloud
let account: TestAccount
let documentServer: TestServer
let dir: ReturnType<typeof tempDir>
let base: string
let openapi: Parameters<typeof contractChecker>[0] & Parameters<typeof generateTypes>[0]

beforeAll(async () => {
  const certificate = makeCertificate('docs.example.com', ['docs.example.com'])
  documentServer = await startHttpsServer(certificate, (req, res) => {
    if (req.url === '/receipt.bin') res.writeHead(200).end(ESCPOS_RECEIPT)
    else res.writeHead(404).end()
  })
  cloud = await startTestCloud({
    fetchSeams: {
      resolve: async () => ['93.184.215.14'],
      connect: (target) =>
        connectTls({ ...target, address: '127.0.0.1', port: documentServer.port }, certificate.cert),
    },
  })
  account = await cloud.createAccount()
  base = await listen(cloud.app)
  openapi = (await (await fetch(`${base}/openapi.json`)).json()) as typeof openapi
  dir = tempDir('typed-client-')
})
afterAll(async () => {
  await cloud?.close()
  await documentServer?.close()
  dir?.remove()
})

describe('a client generated from /openapi.json', () => {
  it('type-checks the backend against the generated types (tsc, the project’s strict options)', async () => {
    const types = await generateTypes(openapi, dir.path)
    expect(readFileSync(types, 'utf8')).toContain('"/api/v1/print-jobs/from-base64"')
    const { code, output } = await typeCheckBackend(dir.path, types)
    expect(output).toBe('')
    expect(code).toBe(0)
  }, 60_000)

  it('the backend and the docs’ till use no casts, no any and no suppressed errors', () => {
    expect(escapeHatches(BACKEND_FILE)).toEqual([])
    expect(escapeHatches(TILL_EXAMPLE_FILE)).toEqual([])
  })

  it('authenticates, uploads, prints in all three ways, polls, lists and cancels; every answer is as documented', async () => {
    const contract = contractChecker(openapi)
    const backend = new PrintServiceBackend({
      baseUrl: base,
      clientId: account.clientId,
      clientSecret: account.clientSecret,
      observer: contract.middleware,
    })

    expect(await backend.authenticate()).toEqual({
      scope: 'printers:read documents:write print_jobs:write print_jobs:read webhooks:write',
      expiresIn: 3600,
    })
    const printers = await backend.printers()
    const receiptPrinter = printers.find((printer) => printer.languages.includes('escpos'))
    expect(receiptPrinter?.printer_id).toBe(account.receiptPrinterId)
    const printerId = account.receiptPrinterId

    const uploaded = await backend.upload(ESCPOS_RECEIPT, 'receipt.bin', 'raw', 'escpos')
    expect(uploaded).toMatchObject({ document_format: 'raw', size_bytes: ESCPOS_RECEIPT.length })
    const fromDocument = await backend.printDocument(uploaded.document_id, printerId, 'A-1')
    expect(fromDocument).toMatchObject({ document_id: uploaded.document_id, copies: 2, status: 'pending' })
    const replayed = await backend.printDocument(uploaded.document_id, printerId, 'A-1')
    expect(replayed.print_job_id).toBe(fromDocument.print_job_id)
    const fromUrl = await backend.printUrl('https://docs.example.com/receipt.bin', printerId, 'A-2')
    expect(fromUrl).toMatchObject({ document_raw_language: 'escpos', status: 'pending' })
    const fromBase64 = await backend.printBase64(ESCPOS_RECEIPT, printerId, 'A-3')
    expect(fromBase64).toMatchObject({ media_width_mm: 80, status: 'pending' })

    // Nothing prints these jobs (no hub): a poll sees them pending until the bound.
    expect((await backend.waitUntilFinished(fromUrl.print_job_id, 2, 10)).status).toBe('pending')
    const pending = await backend.jobs('pending', 2)
    expect(pending.map((job) => job.print_job_id).sort()).toEqual(
      [fromDocument, fromUrl, fromBase64].map((job) => job.print_job_id).sort(),
    )

    const cancelled = await backend.cancel(fromBase64.print_job_id)
    expect(cancelled).toMatchObject({ confirmed: true, job: { status: 'cancelled' } })
    expect((await backend.waitUntilFinished(fromBase64.print_job_id, 5, 10)).status).toBe('cancelled')
    expect((await backend.jobs('cancelled', 10)).map((job) => job.print_job_id)).toEqual([
      fromBase64.print_job_id,
    ])
    const missing = await backend.job(randomUUID()).catch((error: unknown) => error)
    expect(missing).toBeInstanceOf(PrintServiceError)
    expect(missing).toMatchObject({ status: 404, body: { error_code: 'print_job_not_found' } })

    expect(contract.checks.filter((check) => check.problems.length > 0)).toEqual([])
    expect(new Set(contract.checks.map((check) => check.operationId))).toEqual(
      new Set([
        'createAccessToken',
        'listPrinters',
        'uploadDocument',
        'createPrintJob',
        'createPrintJobFromUrl',
        'createPrintJobFromBase64',
        'getPrintJob',
        'listPrintJobs',
        'cancelPrintJob',
      ]),
    )
    expect(contract.checks.some((check) => check.status === 404)).toBe(true)
  })
})

describe('answers outside the backend’s flow are as documented too', () => {
  // Injected: these answers are checked against the document as they are, without a socket.
  const asResponse = (res: LightMyRequestResponse) => {
    const headers = Object.entries(res.headers).flatMap(([name, value]) =>
      value === undefined ? [] : [[name, String(value)] as [string, string]],
    )
    return new Response(res.rawPayload, { status: res.statusCode, headers })
  }
  const inject = async (
    method: 'GET' | 'POST',
    url: string,
    init: { headers?: Record<string, string>; payload?: object | string },
  ) => asResponse(await cloud.app.inject({ method, url, ...init }))

  it('401 with WWW-Authenticate, and 429 with Retry-After and the X-RateLimit headers', async () => {
    const { check } = contractChecker(openapi)
    const limited = await startTestCloud({ env: { RATE_LIMIT_PER_IP: '1' } })
    try {
      const noToken = await inject('GET', '/api/v1/printers', {})
      const badSecret = await inject('POST', '/oauth/token', {
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: new URLSearchParams({
          grant_type: 'client_credentials',
          client_id: account.clientId,
          client_secret: 'wrong',
        }),
      })
      const first = await limited.app.inject({ method: 'GET', url: '/api/v1/printers' })
      expect(first.statusCode).toBe(401)
      const second = await limited.app.inject({ method: 'GET', url: '/api/v1/printers' })
      expect(second.statusCode).toBe(429)
      expect([
        await check('GET', '/api/v1/printers', noToken),
        await check('POST', '/oauth/token', badSecret),
        await check('GET', '/api/v1/printers', asResponse(second)),
      ]).toEqual([
        { operationId: 'listPrinters', status: 401, problems: [] },
        { operationId: 'createAccessToken', status: 401, problems: [] },
        { operationId: 'listPrinters', status: 429, problems: [] },
      ])
    } finally {
      await limited.close()
    }
  })

  it('enroll, connection and document download (application/octet-stream)', async () => {
    const { check } = contractChecker(openapi)
    const token = generateSecret('enr')
    await cloud.storage.enrollments.create(
      account.accountId,
      'Back office',
      hashSecret(token),
      new Date(Date.now() + 60_000),
    )
    const enrolled = await inject('POST', '/agent-api/v1/enroll', {
      payload: { token, hostname: 'pi', agent_version: '1.0.0' },
    })
    const checks = [await check('POST', '/agent-api/v1/enroll', enrolled.clone())]
    const hub = (await enrolled.json()) as { agent_id: string; credential: string }
    const printer = await cloud.storage.printers.insert({
      account_id: account.accountId,
      agent_id: hub.agent_id,
      name: 'Back office receipts',
      capabilities: RECEIPT_PRINTER,
      reported: true,
    })
    const job = await createReceiptJob(cloud, await account.token(), printer.printer_id)
    const asHub = { headers: { authorization: `Bearer ${hub.credential}` } }
    const connection = await inject('GET', '/agent-api/v1/connection', asHub)
    checks.push(await check('GET', '/agent-api/v1/connection', connection))
    const download = await inject('GET', `/agent-api/v1/documents/${job.document_id}`, asHub)
    expect(download.status).toBe(200)
    checks.push(await check('GET', '/agent-api/v1/documents/{documentId}', download))
    expect(checks).toEqual([
      { operationId: 'enrollAgent', status: 201, problems: [] },
      { operationId: 'getAgentConnection', status: 200, problems: [] },
      { operationId: 'downloadAgentDocument', status: 200, problems: [] },
    ])
  })
})

describe('the contract check itself', () => {
  const answer = (status: number, body: unknown, headers: Record<string, string>) =>
    new Response(JSON.stringify(body), {
      status,
      headers: { 'content-type': 'application/json; charset=utf-8', ...headers },
    })
  const fullHeaders = {
    'x-request-id': 'r-1',
    'x-ratelimit-limit': '10',
    'x-ratelimit-remaining': '9',
    'x-ratelimit-reset': '1700000000',
    'x-ratelimit-scope': 'account',
  }

  it('finds a body that breaks the schema, a missing or malformed header and an undocumented status', async () => {
    const { check } = contractChecker(openapi)
    const path = '/api/v1/print-jobs/{printJobId}'
    const broken = await check('GET', path, answer(200, { print_job_id: 'x' }, fullHeaders))
    expect(broken.problems.join('\n')).toMatch(/body: .*must have required property/)
    const { 'x-request-id': _, ...noRequestId } = fullHeaders
    const missing = await check(
      'GET',
      path,
      answer(404, { error: 'a', error_code: 'b', message: 'c' }, noRequestId),
    )
    expect(missing.problems).toEqual(['header X-Request-Id is missing'])
    const malformed = await check(
      'GET',
      path,
      answer(429, { error: 'a', error_code: 'b', message: 'c' }, { ...fullHeaders, 'retry-after': 'soon' }),
    )
    expect(malformed.problems.join('\n')).toMatch(/header Retry-After/)
    const undocumented = await check('GET', path, answer(302, {}, fullHeaders))
    expect(undocumented.problems).toEqual(['status 302 is not documented'])
  })
})
