import { generateKeyPairSync, randomBytes } from 'node:crypto'
import path from 'node:path'
import fc from 'fast-check'
import type { LightMyRequestResponse } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { publishRelease } from '../../../ota/publish.ts'
import { generateSecret, hashSecret } from '../../../print-api/secrets.ts'
import { ERROR_CODES, type ErrorCode } from '../../../protocol/errors.ts'
import { writeFakeBuild } from '../../helpers/fake-release.ts'
import { bearer, createReceiptJob } from '../api/api-helpers.ts'
import { assertionSync, registerApplication, type TestApplication } from '../developer/applications.ts'
import { registerPartner } from '../partner/partner-helpers.ts'
import { ENGINES, storageEngine } from '../storage/engines.ts'
import { startTestCloud, type TestAccount, type TestCloud } from '../test-cloud.ts'
import {
  authorizationVariants,
  contentTypeVariants,
  escposBase64,
  formBody,
  type GeneratedRequest,
  headerValue,
  type IdPool,
  type JsonSchema,
  jsonBody,
  MULTIPART_TYPE,
  multipartBody,
  pathSegment,
  queryString,
} from './request-arbitraries.ts'

// Property: whatever arrives at any endpoint (bodies, headers, query strings, path ids), the answer is a 4xx
// with the spec's error body or a documented 2xx; never a 5xx. The endpoints come from the served OpenAPI
// document, so a new endpoint is covered without touching this file. PROPERTY_RUNS raises the runs per
// endpoint (npm test keeps it short); a failure prints fast-check's seed and the shrunk request.

const RUNS = Number(process.env.PROPERTY_RUNS ?? 120)
/** Generous: about 13 endpoints × RUNS requests, a few of them many MiB. */
const TIMEOUT_MS = 60_000 + RUNS * 400

interface Operation {
  method: string
  path: string
  operationId: string
  parameters: { in: string; name: string; schema?: JsonSchema }[]
  requestTypes: Record<string, { schema?: JsonSchema }>
  successStatuses: number[]
}

interface OpenApiDocument {
  paths: Record<
    string,
    Record<
      string,
      {
        operationId: string
        parameters?: Operation['parameters']
        requestBody?: { content: Operation['requestTypes'] }
        responses: Record<string, unknown>
      }
    >
  >
}

function operationsOf(document: OpenApiDocument): Operation[] {
  return Object.entries(document.paths).flatMap(([path, methods]) =>
    Object.entries(methods).map(([method, op]) => ({
      method: method.toUpperCase(),
      path,
      operationId: op.operationId,
      parameters: op.parameters ?? [],
      requestTypes: op.requestBody?.content ?? {},
      successStatuses: Object.keys(op.responses)
        .filter((status) => /^2\d\d$/.test(status))
        .map(Number),
    })),
  )
}

/** The spec's error body, exactly, with the catalogue's status and class for its code. */
function expectSpecAnswer(res: LightMyRequestResponse, op: Operation): void {
  const summary = `${res.statusCode} ${res.body.slice(0, 300)}`
  expect(res.statusCode, summary).toBeLessThan(500)
  expect(res.headers['x-request-id'], summary).toEqual(expect.any(String))
  if (res.statusCode < 400) {
    expect(op.successStatuses, summary).toContain(res.statusCode)
    return
  }
  expect(res.headers['content-type'], summary).toBe('application/json; charset=utf-8')
  const body = res.json() as Record<string, unknown>
  expect(
    Object.keys(body).filter((key) => key !== 'details'),
    summary,
  ).toStrictEqual(['error', 'error_code', 'message'])
  const entry = ERROR_CODES[body.error_code as ErrorCode]
  expect(entry, summary).toBeDefined()
  expect(body.error, summary).toBe(entry.error)
  expect(res.statusCode, summary).toBe(entry.status)
  expect(body.message, summary).toEqual(expect.any(String))
  if ('details' in body) expect(body.details, summary).toEqual(expect.any(Object))
}

function describeRequest(request: GeneratedRequest): string {
  const payload = request.payload === undefined ? undefined : String(request.payload)
  const shown =
    payload && payload.length > 500 ? `${payload.slice(0, 500)}… (${payload.length} characters)` : payload
  return fc.stringify({ ...request, payload: shown })
}

// On both engines: PostgreSQL refuses what SQLite stores (a NUL in text, say), which must be a 4xx too.
describe.each(ENGINES)('no input produces a 5xx, at any endpoint, on %s', (engine) => {
  const engineUnderTest = storageEngine(engine)
  let cloud: TestCloud
  let account: TestAccount
  let operations: Operation[]
  let pool: IdPool
  let hubCredential: string
  /** Bearer tokens of the account: every scope, and printers:read alone. */
  let fullToken: string
  let readToken: string
  let enrollmentTokens: string[]
  /** A partner application (developer and partner APIs take a fresh assertion of it each). */
  let partner: TestApplication

  beforeAll(async () => {
    const { databaseUrl, remove } = await engineUnderTest.freshSettings()
    remove()
    cloud = await startTestCloud({
      // Failed token and enrollment requests are many here; their quotas are tested elsewhere.
      env: {
        TOKEN_FAILURES_PER_IP: '1000000',
        TOKEN_FAILURES_PER_CLIENT: '1000000',
        ...(databaseUrl && { DATABASE_URL: databaseUrl }),
      },
      fetchSeams: {
        // No network: names resolve to a public address (then nothing answers) or to addresses the
        // policy refuses; the connector never opens a socket.
        resolve: async (hostname) =>
          hostname.length % 3 === 0 ? ['93.184.215.14'] : hostname.length % 3 === 1 ? ['10.0.0.1'] : [],
        connect: () => {
          throw Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' })
        },
      },
    })
    // A published release, so that the download routes answer from a catalog (a missing one is a 503).
    const { privateKey } = generateKeyPairSync('ed25519')
    const release = await publishRelease({
      fromDir: writeFakeBuild(path.join(cloud.dataDir, 'build'), '1.0.0', [{ arch: 'amd64', size: 2000 }]),
      dataDir: cloud.dataDir,
      privateKeyPem: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    })
    account = await cloud.createAccount('Property shop')
    const other = await cloud.createAccount('Other shop')
    const token = await account.token()
    fullToken = token
    readToken = await account.token(['printers:read'])
    const ownJob = await createReceiptJob(cloud, token, account.receiptPrinterId)
    const foreignJob = await createReceiptJob(cloud, await other.token(), other.receiptPrinterId)
    pool = {
      printers: [account.receiptPrinterId, account.labelPrinterId],
      documents: [ownJob.document_id],
      jobs: [ownJob.print_job_id],
      agents: [account.agentId],
      installers: release.releases.flatMap((r) => r.installers.map((i) => i.filename)),
      foreign: [other.receiptPrinterId, foreignJob.print_job_id, foreignJob.document_id],
    }
    hubCredential = generateSecret('hub')
    const enroll = async (credential: string) => {
      const token = generateSecret('enr')
      await cloud.storage.enrollments.create(
        account.accountId,
        'Hub',
        hashSecret(token),
        new Date(Date.now() + 3600_000),
      )
      if (credential !== '') {
        await cloud.storage.enrollments.claim(hashSecret(token), hashSecret(credential), 'pi', new Date())
      }
      return token
    }
    await enroll(hubCredential)
    enrollmentTokens = [await enroll(''), await enroll(''), await enroll('')]
    const registered = await registerPartner(cloud)
    partner = registered
    const managed = await registered.provision()
    const otherApp = await registerApplication(cloud.storage, cloud.config.publicUrl, { partner: true })
    const foreignInstallation = await cloud.storage.applications.install(otherApp.appId, account.accountId, [
      'printers:read',
    ])
    pool.relationships = [managed.relationship_id]
    pool.enrollments = [managed.agent_enrollment.enrollment_id]
    pool.installations = [managed.installation_id, foreignInstallation.installation_id]
    const res = await cloud.app.inject({ method: 'GET', url: '/openapi.json' })
    operations = operationsOf(res.json() as OpenApiDocument)
  })
  afterAll(() => cloud?.close())

  it('finds every endpoint in the OpenAPI document', () => {
    expect(operations.map((op) => op.operationId)).toEqual(
      expect.arrayContaining([
        'createAccessToken',
        'listPrinters',
        'uploadDocument',
        'createPrintJob',
        'createPrintJobFromUrl',
        'createPrintJobFromBase64',
        'getPrintJob',
        'listPrintJobs',
        'cancelPrintJob',
        'enrollAgent',
        'downloadAgentDocument',
        'createAgentPairing',
        'pollAgentPairing',
        'createInstallationAccessToken',
        'listManagedAccounts',
        'createManagedAccount',
        'getManagedAccount',
        'changeManagedAccountState',
        'listAgentEnrollments',
        'createAgentEnrollment',
        'getAgentEnrollment',
      ]),
    )
  })

  /** The credential each part of the API takes: a hub credential, client credentials in the body, a token. */
  /** A fresh application assertion for each request (each is accepted once). */
  const assertion = () =>
    fc.constant(null).map(() => `Bearer ${assertionSync(partner, cloud.config.publicUrl)}`)
  const takesAssertion = (op: Operation) => /^\/(partner|developer)-api\//.test(op.path)

  function authorizationFor(op: Operation): fc.Arbitrary<string | undefined> {
    if (takesAssertion(op)) {
      return fc.oneof(
        { weight: 9, arbitrary: assertion() },
        { weight: 1, arbitrary: authorizationVariants(undefined) },
      )
    }
    if (op.path.startsWith('/agent-api/')) return authorizationVariants(`Bearer ${hubCredential}`)
    if (op.path === '/oauth/token') {
      const basic = Buffer.from(`${account.clientId}:${account.clientSecret}`).toString('base64')
      return fc.oneof(fc.constant(undefined), authorizationVariants(`Basic ${basic}`))
    }
    const tokens = fc.oneof(
      { weight: 5, arbitrary: fc.constant(fullToken) },
      { weight: 1, arbitrary: fc.constant(readToken) },
    )
    return tokens.chain((token) => authorizationVariants(bearer(token).authorization))
  }

  /** Fields that make a well-formed create request printable: an ESC/POS receipt for the receipt printer. */
  function coherentFields(op: Operation): fc.Arbitrary<Record<string, unknown>> {
    const receipt = fc.record({
      printer_id: fc.constant(account.receiptPrinterId),
      dpi: fc.constantFrom(203, null),
      media_width_mm: fc.constantFrom(58, 80, null),
      media_height_mm: fc.constant(null),
      color_mode: fc.constantFrom('default', 'monochrome'),
      duplex_mode: fc.constantFrom('default', 'simplex'),
    })
    switch (op.operationId) {
      case 'createManagedAccount':
        return fc.record({
          external_customer_id: fc.uuid(),
          permissions: fc.subarray(
            ['printers:read', 'documents:write', 'print_jobs:write', 'print_jobs:read'],
            {
              minLength: 1,
            },
          ),
          agent_onboarding: fc.record({
            return_uri: fc.constantFrom('https://pos.example/done', 'http://localhost:3000/cb'),
            state: fc.uuid(),
          }),
        })
      case 'createAgentEnrollment':
        return fc.record({
          agent_onboarding: fc.record({
            return_uri: fc.constantFrom('https://pos.example/done', 'http://localhost:3000/cb'),
            state: fc.uuid(),
          }),
        })
      case 'createInstallationAccessToken':
      case 'listManagedAccounts':
        return fc.constant({})
      case 'createPrintJob':
        return receipt.map((fields) => ({ ...fields, document_id: pool.documents[0] }))
      case 'createPrintJobFromBase64':
        return fc.tuple(receipt, escposBase64).map(([fields, document_base64]) => ({
          ...fields,
          document_base64,
          document_format: 'raw',
          document_raw_language: 'escpos',
        }))
      default:
        return receipt
    }
  }

  function validAuthorization(op: Operation): fc.Arbitrary<string | undefined> {
    if (takesAssertion(op)) return assertion()
    if (op.path.startsWith('/agent-api/')) return fc.constant(`Bearer ${hubCredential}`)
    if (op.path === '/oauth/token') return fc.constant(undefined)
    return fc.constant(bearer(fullToken).authorization)
  }

  function bodyFor(
    op: Operation,
    wellFormed: boolean,
  ): fc.Arbitrary<{ type: string; payload: string | Buffer } | undefined> {
    const [type, media] = Object.entries(op.requestTypes)[0] ?? []
    if (type === 'application/json') {
      const schema = media?.schema
      const extra = op.path.endsWith('/enroll')
        ? fc
            .constantFrom(...enrollmentTokens)
            .map((token) => ({ token, hostname: 'pi', agent_version: '1.0.0' }))
        : null
      const json = extra
        ? fc.oneof(
            jsonBody(schema, pool, wellFormed),
            extra.map((body) => JSON.stringify(body)),
          )
        : jsonBody(schema, pool, wellFormed, coherentFields(op))
      return json.map((payload) => ({ type, payload }))
    }
    if (type === 'application/x-www-form-urlencoded') {
      if (wellFormed) {
        const form = new URLSearchParams({
          grant_type: 'client_credentials',
          client_id: account.clientId,
          client_secret: account.clientSecret,
        })
        return fc.constant({ type, payload: form.toString() })
      }
      const credentials = [fc.constantFrom(account.clientId, account.clientSecret)]
      return formBody(media?.schema, credentials).map((payload) => ({ type, payload }))
    }
    if (type === 'multipart/form-data')
      return multipartBody.map((payload) => ({ type: MULTIPART_TYPE, payload }))
    // No body documented: usually none, sometimes one anyway.
    if (wellFormed) return fc.constant(undefined)
    return fc.option(
      fc.oneof(
        jsonBody(undefined, pool).map((payload) => ({ type: 'application/json', payload })),
        fc
          .uint8Array({ maxLength: 64 })
          .map((bytes) => ({ type: 'application/octet-stream', payload: Buffer.from(bytes) })),
      ),
      { freq: 4, nil: undefined },
    )
  }

  /** Requests to `op`: one in three well formed in every part (so that handlers run), the rest anything. */
  function requestsFor(op: Operation): fc.Arbitrary<GeneratedRequest> {
    return fc.oneof(
      { weight: 1, arbitrary: requestsOf(op, true) },
      { weight: 2, arbitrary: requestsOf(op, false) },
    )
  }

  function requestsOf(op: Operation, wellFormed: boolean): fc.Arbitrary<GeneratedRequest> {
    const pathParams = op.parameters.filter((p) => p.in === 'path')
    const queryParams = op.parameters.filter((p) => p.in === 'query')
    const headerText = wellFormed ? fc.stringMatching(/^[A-Za-z0-9._:-]{1,128}$/) : headerValue
    return fc
      .record({
        segments: fc.tuple(...pathParams.map((param) => pathSegment(pool, param.name, wellFormed))),
        query: queryString(queryParams, pool, wellFormed),
        body: bodyFor(op, wellFormed),
        contentType: wellFormed ? fc.constant(null) : contentTypeVariants(),
        authorization: wellFormed ? validAuthorization(op) : authorizationFor(op),
        // The partner API requires the key: a well-formed request always has one.
        idempotencyKey: wellFormed && takesAssertion(op) ? headerText : fc.option(headerText, { freq: 2 }),
        requestId: fc.option(headerText, { freq: 2 }),
      })
      .map(({ segments, query, body, contentType, authorization, idempotencyKey, requestId }) => {
        let path = op.path
        pathParams.forEach((param, i) => {
          path = path.replace(`{${param.name}}`, segments[i] ?? '')
        })
        const headers: Record<string, string> = {}
        if (authorization !== undefined) headers.authorization = authorization
        if (idempotencyKey !== null) headers['idempotency-key'] = idempotencyKey
        if (requestId !== null) headers['x-request-id'] = requestId
        const type = contentType === null ? body?.type : contentType
        if (type !== undefined) headers['content-type'] = type
        const request = { method: op.method, url: `${path}${query}`, headers, payload: body?.payload }
        // A counterexample is printed with its payload cut short (some are many MiB).
        return Object.assign(request, { [fc.toStringMethod]: () => describeRequest(request) })
      })
  }

  it(
    'answers every generated request to every endpoint with a 4xx error body or a documented 2xx',
    async () => {
      for (const op of operations) {
        await fc.assert(
          fc.asyncProperty(requestsFor(op), async (request) => {
            const res = await cloud.app.inject({
              method: request.method as 'GET',
              url: request.url,
              headers: request.headers,
              ...(request.payload !== undefined && { payload: request.payload }),
            })
            expectSpecAnswer(res, op)
          }),
          { numRuns: RUNS, verbose: 1 },
        )
      }
    },
    TIMEOUT_MS,
  )

  it(
    'answers random bytes with any Content-Type at every endpoint without a 5xx',
    async () => {
      const bytes = fc.oneof(
        fc.uint8Array({ maxLength: 512 }).map((b) => Buffer.from(b)),
        fc.integer({ min: 1, max: 64 }).map((n) => randomBytes(n * 1024)),
      )
      for (const op of operations) {
        await fc.assert(
          fc.asyncProperty(bytes, contentTypeVariants(), async (payload, contentType) => {
            const type = contentType === null ? 'application/json' : contentType
            const url = op.path.replace(/\{[^}]+\}/g, pool.jobs[0] ?? 'x')
            const res = await cloud.app.inject({
              method: op.method as 'POST',
              url,
              headers: {
                ...bearer(await account.token()),
                ...(type !== undefined && { 'content-type': type }),
              },
              payload,
            })
            expectSpecAnswer(res, op)
          }),
          { numRuns: Math.ceil(RUNS / 3) },
        )
      }
    },
    TIMEOUT_MS,
  )
})
