import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { SCOPES, type Scope } from '../../../protocol/enums.ts'
import { ERROR_CODES } from '../../../protocol/errors.ts'
import { WEBHOOK_EVENT_TYPES } from '../../../protocol/webhooks.ts'
import { startTestCloud, type TestAccount, type TestCloud } from '../test-cloud.ts'
import { bearer, expectInjectedError, listen } from './api-helpers.ts'

// GET /openapi.json: an OpenAPI 3.1 document generated from the same schemas, with the spec's operation ids.

type Json = Record<string, unknown>
interface Header extends Json {
  required?: boolean
  schema?: Json
}
interface Response {
  description: string
  headers?: Record<string, Header>
  content?: Record<string, { schema: Json }>
}
interface Operation extends Json {
  operationId?: string
  parameters?: Json[]
  requestBody?: { content: Record<string, { schema: Json }> }
  responses: Record<string, Response>
  security?: Record<string, string[]>[]
}
interface OpenApiDocument {
  openapi: string
  info: Json
  paths: Record<string, Record<string, Operation>>
  webhooks?: Record<string, Record<string, Operation>>
  components?: {
    schemas?: Record<string, Json>
    securitySchemes?: Record<string, Json>
    headers?: Record<string, Header>
    parameters?: Record<string, Json>
  }
}

/** The spec's print job fields (Resources → Print job), each always present. */
/** Why a job waits (issue 7.6), additive within v1. */
const ADDITIVE_PRINT_JOB_FIELDS = ['waiting_reason', 'failure_detail', 'origin', 'duplicate_of']
const PRINT_JOB_FIELDS = [
  'print_job_id',
  'document_id',
  'document_mime_type',
  'document_format',
  'document_raw_language',
  'printer_id',
  'status',
  'copies',
  'intent',
  'color_mode',
  'duplex_mode',
  'media_width_mm',
  'media_height_mm',
  'dpi',
  'scale_mode',
  'orientation',
  'offset_x_mm',
  'offset_y_mm',
  'margin_top_mm',
  'margin_right_mm',
  'margin_bottom_mm',
  'margin_left_mm',
  'created_at',
  'reserved_at',
  'started_at',
  'completed_at',
  'failure_reason',
]

const CREATE_OPERATIONS: [string, string][] = [
  ['/api/v1/print-jobs', 'createPrintJob'],
  ['/api/v1/print-jobs/from-url', 'createPrintJobFromUrl'],
  ['/api/v1/print-jobs/from-base64', 'createPrintJobFromBase64'],
]

let cloud: TestCloud
let account: TestAccount
let doc: OpenApiDocument
let status: number
let contentType: string | null
beforeAll(async () => {
  cloud = await startTestCloud()
  account = await cloud.createAccount()
  const base = await listen(cloud.app)
  const res = await fetch(`${base}/openapi.json`)
  status = res.status
  contentType = res.headers.get('content-type')
  doc = (await res.json()) as OpenApiDocument
})
afterAll(async () => {
  await cloud?.close()
})

/** Follows local `$ref`s (`#/components/schemas/X`). */
function resolve(schema: Json): Json {
  let current = schema
  for (let hops = 0; typeof current.$ref === 'string' && hops < 10; hops++) {
    const pointer = (current.$ref as string).replace(/^#\//, '').split('/')
    let target: unknown = doc
    for (const part of pointer) target = (target as Json)[part.replaceAll('~1', '/').replaceAll('~0', '~')]
    expect(target, `unresolved ${current.$ref}`).toBeDefined()
    current = target as Json
  }
  return current
}

/** The numeric bounds of a property, looking through a nullable union (anyOf / oneOf / type arrays). */
function bounds(schema: Json): { type: unknown; minimum: unknown; maximum: unknown } {
  const s = resolve(schema)
  const variants = (s.anyOf ?? s.oneOf) as Json[] | undefined
  if (variants) {
    const numeric = variants.map(resolve).find((v) => v.type === 'number' || v.type === 'integer')
    expect(numeric, JSON.stringify(s)).toBeDefined()
    return bounds(numeric!)
  }
  const type = Array.isArray(s.type) ? s.type.find((t) => t !== 'null') : s.type
  return { type, minimum: s.minimum, maximum: s.maximum }
}

function operation(path: string, method: string): Operation {
  const op = doc.paths[path]?.[method]
  expect(op, `${method.toUpperCase()} ${path} in the document`).toBeDefined()
  return op!
}

function jsonBody(op: Operation): Json {
  const schema = op.requestBody?.content['application/json']?.schema
  expect(schema, `${op.operationId}: application/json request body`).toBeDefined()
  return resolve(schema!)
}

describe('GET /openapi.json', () => {
  it('serves an OpenAPI 3.1.0 document as JSON', () => {
    expect(status).toBe(200)
    expect(contentType).toBe('application/json; charset=utf-8')
    expect(doc.openapi).toBe('3.1.0')
    expect(doc.info).toMatchObject({ title: expect.any(String), version: expect.any(String) })
  })

  it.each([
    ['/api/v1/print-jobs', 'post', 'createPrintJob'],
    ['/api/v1/print-jobs/from-url', 'post', 'createPrintJobFromUrl'],
    ['/api/v1/print-jobs/from-base64', 'post', 'createPrintJobFromBase64'],
    ['/api/v1/print-jobs/{printJobId}', 'get', 'getPrintJob'],
    ['/api/v1/print-jobs', 'get', 'listPrintJobs'],
    ['/api/v1/agents', 'get', 'listAgents'],
    ['/api/v1/printers', 'get', 'listPrinters'],
    ['/api/v1/documents', 'post', 'uploadDocument'],
    ['/oauth/token', 'post', 'createAccessToken'],
    ['/api/v1/webhook-endpoints', 'post', 'createWebhookEndpoint'],
    ['/api/v1/webhook-endpoints', 'get', 'listWebhookEndpoints'],
    ['/api/v1/webhook-endpoints/{webhookEndpointId}', 'get', 'getWebhookEndpoint'],
    ['/api/v1/webhook-endpoints/{webhookEndpointId}', 'patch', 'updateWebhookEndpoint'],
    ['/api/v1/webhook-endpoints/{webhookEndpointId}', 'delete', 'deleteWebhookEndpoint'],
    ['/api/v1/webhook-endpoints/{webhookEndpointId}/rotate-secret', 'post', 'rotateWebhookSecret'],
    ['/api/v1/webhook-endpoints/{webhookEndpointId}/test', 'post', 'sendWebhookTestEvent'],
    ['/api/v1/webhook-endpoints/{webhookEndpointId}/deliveries', 'get', 'listWebhookDeliveries'],
    ['/api/v1/webhook-deliveries/{webhookDeliveryId}/attempts', 'get', 'listWebhookAttempts'],
    ['/api/v1/webhook-deliveries/{webhookDeliveryId}/redeliver', 'post', 'redeliverWebhook'],
  ])('%s %s has operationId %s', (path, method, operationId) => {
    expect(operation(path, method).operationId).toBe(operationId)
  })

  it('each operation id is used exactly once', () => {
    const ids = Object.values(doc.paths).flatMap((methods) =>
      Object.values(methods)
        .map((op) => op.operationId)
        .filter((id) => id !== undefined),
    )
    expect(new Set(ids).size).toBe(ids.length)
  })

  it('names the path parameter {printJobId}: a required uuid in the path', () => {
    const params = operation('/api/v1/print-jobs/{printJobId}', 'get').parameters ?? []
    const param = params.find((p) => p.in === 'path')
    expect(param).toMatchObject({ name: 'printJobId', in: 'path', required: true })
    expect(resolve(param!.schema as Json)).toMatchObject({ type: 'string', format: 'uuid' })
    expect(Object.keys(doc.paths).some((p) => p.includes(':'))).toBe(false)
  })

  it.each([
    ...CREATE_OPERATIONS.map(([path]) => [path, 'post', '201'] as const),
    ['/api/v1/print-jobs/{printJobId}', 'get', '200'] as const,
  ])('%s %s: the %s response is the print job with every field required', (path, method, code) => {
    const schema = operation(path, method).responses[code]?.content?.['application/json']?.schema
    expect(schema, `${method} ${path} ${code} schema`).toBeDefined()
    const job = resolve(schema!)
    // The spec's fields, plus the additive ones this service documents (spec: Versioning).
    const fields = [...PRINT_JOB_FIELDS, ...ADDITIVE_PRINT_JOB_FIELDS].sort()
    expect([...((job.required as string[]) ?? [])].sort()).toEqual(fields)
    expect(Object.keys(job.properties as Json).sort()).toEqual(fields)
  })

  it.each(CREATE_OPERATIONS)('%s (%s): the request body carries the bounds of the Limits table', (path) => {
    const body = jsonBody(operation(path, 'post'))
    const props = body.properties as Record<string, Json>
    const expectBounds = (name: string, type: string, minimum: number, maximum: number) => {
      expect(props[name], `${path}: ${name}`).toBeDefined()
      expect(bounds(props[name]!), `${path}: ${name}`).toEqual({ type, minimum, maximum })
    }
    expectBounds('copies', 'integer', 1, 99)
    expectBounds('dpi', 'integer', 72, 2400)
    expectBounds('media_width_mm', 'number', 1, 2000)
    expectBounds('media_height_mm', 'number', 1, 2000)
    expectBounds('offset_x_mm', 'number', -2000, 2000)
    expectBounds('offset_y_mm', 'number', -2000, 2000)
    for (const margin of ['margin_top_mm', 'margin_right_mm', 'margin_bottom_mm', 'margin_left_mm']) {
      expectBounds(margin, 'number', 0, 2000)
    }
    expect(body.required).toEqual(expect.arrayContaining(['printer_id']))
  })

  it.each(CREATE_OPERATIONS)('%s (%s): says which options are ignored for RAW payloads', (path) => {
    const props = jsonBody(operation(path, 'post')).properties as Record<string, Json>
    const rendering = ['media_width_mm', 'media_height_mm', 'dpi', 'scale_mode', 'orientation']
    const placement = ['offset_x_mm', 'offset_y_mm', 'margin_top_mm', 'margin_right_mm']
    for (const name of [...rendering, ...placement, 'margin_bottom_mm', 'margin_left_mm']) {
      expect(props[name]?.description, `${path}: ${name}`).toContain('ignored for RAW payloads')
    }
    for (const name of ['copies', 'color_mode', 'duplex_mode']) {
      expect(props[name]?.description, `${path}: ${name}`).not.toContain('ignored for RAW')
    }
    // The enums stay named components in answers, described beside their reference.
    const answer = operation(path, 'post').responses['201']?.content?.['application/json']?.schema
    const job = resolve(answer ?? {})
    const scale = (job.properties as Record<string, Json>).scale_mode!
    expect(scale.$ref).toBe('#/components/schemas/ScaleMode')
    expect(scale.description).toContain('ignored for RAW payloads')
  })

  it.each(CREATE_OPERATIONS)('%s (%s): describes the order of its checks', (path) => {
    const description = String(operation(path, 'post').description)
    const order = [
      'is a 400',
      'unknown `printer_id`',
      'options the printer cannot do',
      'is a 409',
      'full queue',
    ]
    const at = order.map((step) => description.indexOf(step))
    expect(
      at.every((i) => i >= 0),
      description,
    ).toBe(true)
    expect([...at].sort((a, b) => a - b)).toEqual(at)
  })

  it('the required fields of each create body are the spec’s', () => {
    const required = (path: string) =>
      [...((jsonBody(operation(path, 'post')).required as string[]) ?? [])].sort()
    expect(required('/api/v1/print-jobs')).toEqual(['document_id', 'printer_id'])
    expect(required('/api/v1/print-jobs/from-url')).toEqual(['document_url', 'printer_id'])
    expect(required('/api/v1/print-jobs/from-base64')).toEqual(['document_base64', 'printer_id'])
  })

  it.each(CREATE_OPERATIONS)('%s (%s): Idempotency-Key is an optional header of maxLength 128', (path) => {
    const params = operation(path, 'post').parameters ?? []
    const key = params.find((p) => p.in === 'header' && String(p.name).toLowerCase() === 'idempotency-key')
    expect(key, `${path}: Idempotency-Key header`).toBeDefined()
    expect(key!.required ?? false).toBe(false)
    expect(resolve(key!.schema as Json)).toMatchObject({ type: 'string', maxLength: 128 })
  })

  it.each([
    ['/api/v1/print-jobs', 'get'],
    ['/api/v1/agents', 'get'],
    ['/api/v1/printers', 'get'],
    ['/api/v1/webhook-endpoints/{webhookEndpointId}/deliveries', 'get'],
  ])('%s %s: the list query has limit 1..100 (default 50) and a uuid cursor', (path, method) => {
    const params = operation(path, method).parameters ?? []
    const limit = params.find((p) => p.in === 'query' && p.name === 'limit')
    const cursor = params.find((p) => p.in === 'query' && p.name === 'cursor')
    expect(limit && resolve(limit.schema as Json)).toMatchObject({
      type: 'integer',
      minimum: 1,
      maximum: 100,
      default: 50,
    })
    expect(cursor && resolve(cursor.schema as Json)).toMatchObject({ type: 'string', format: 'uuid' })
  })

  it.each([
    ['/api/v1/print-jobs', 'post', ['print_jobs:write']],
    ['/api/v1/print-jobs/from-url', 'post', ['documents:write', 'print_jobs:write']],
    ['/api/v1/print-jobs/from-base64', 'post', ['documents:write', 'print_jobs:write']],
    ['/api/v1/print-jobs/{printJobId}', 'get', ['print_jobs:read']],
    ['/api/v1/print-jobs/{printJobId}/cancel', 'post', ['print_jobs:write']],
    ['/api/v1/print-jobs', 'get', ['print_jobs:read']],
    ['/api/v1/agents', 'get', ['printers:read']],
    ['/api/v1/printers', 'get', ['printers:read']],
    ['/api/v1/documents', 'post', ['documents:write']],
    ['/api/v1/webhook-endpoints', 'post', ['webhooks:write']],
    ['/api/v1/webhook-endpoints', 'get', ['webhooks:write']],
    ['/api/v1/webhook-endpoints/{webhookEndpointId}', 'patch', ['webhooks:write']],
    ['/api/v1/webhook-endpoints/{webhookEndpointId}', 'delete', ['webhooks:write']],
    ['/api/v1/webhook-endpoints/{webhookEndpointId}/rotate-secret', 'post', ['webhooks:write']],
    ['/api/v1/webhook-deliveries/{webhookDeliveryId}/redeliver', 'post', ['webhooks:write']],
  ])('%s %s requires a bearer token with the scopes %j', (path, method, scopes) => {
    expect(doc.components?.securitySchemes?.bearerAuth).toMatchObject({ type: 'http', scheme: 'bearer' })
    expect(operation(path, method).security).toEqual([{ bearerAuth: scopes }, { clientCredentials: scopes }])
  })

  it('every /api/v1 operation states its scopes', () => {
    for (const [path, methods] of Object.entries(doc.paths)) {
      if (!path.startsWith('/api/v1/')) continue
      for (const [method, op] of Object.entries(methods)) {
        const scopes = op.security?.[0]?.bearerAuth
        expect(scopes?.length, `${method} ${path}`).toBeGreaterThan(0)
      }
    }
  })

  it('the token request needs no scheme (credentials in the body) or HTTP Basic; enrollment needs none', () => {
    expect(operation('/oauth/token', 'post').security).toEqual([{}, { clientBasic: [] }])
    expect(doc.components?.securitySchemes?.clientBasic).toMatchObject({ type: 'http', scheme: 'basic' })
    expect(operation('/agent-api/v1/enroll', 'post').security).toEqual([])
  })

  it.each([
    ['/agent-api/v1/connection', 'get'],
    ['/agent-api/v1/documents/{documentId}', 'get'],
  ])('%s %s takes a hub credential', (path, method) => {
    expect(operation(path, method).security).toEqual([{ hubCredential: [] }])
  })

  it('documents the token request as form-urlencoded', () => {
    const op = operation('/oauth/token', 'post')
    expect(Object.keys(op.requestBody?.content ?? {})).toEqual(['application/x-www-form-urlencoded'])
  })

  it('documents the upload as multipart/form-data', () => {
    const op = operation('/api/v1/documents', 'post')
    expect(Object.keys(op.requestBody?.content ?? {})).toEqual(['multipart/form-data'])
  })
})

/** Every operation of the document, with its path and method. */
function operations(): { path: string; method: string; op: Operation }[] {
  return Object.entries(doc.paths).flatMap(([path, methods]) =>
    Object.entries(methods).map(([method, op]) => ({ path, method, op })),
  )
}

/** Every response of every operation, named for failure messages. */
function responses(): { name: string; status: string; response: Response; op: Operation }[] {
  return operations().flatMap(({ path, method, op }) =>
    Object.entries(op.responses).map(([status, response]) => ({
      name: `${method} ${path} ${status}`,
      status,
      response,
      op,
    })),
  )
}

/** A header of a response, looking through `#/components/headers/…`. */
function headerOf(response: Response, name: string): Header | undefined {
  const found = response.headers?.[name]
  return found && (resolve(found) as Header)
}

/** Every subschema reachable from `schema` (through refs), each once. */
function reachable(schema: Json, seen = new Set<Json>()): Json[] {
  const s = resolve(schema)
  if (seen.has(s)) return []
  seen.add(s)
  const children = [
    ...Object.values((s.properties as Record<string, Json>) ?? {}),
    ...((s.anyOf as Json[]) ?? []),
    ...((s.oneOf as Json[]) ?? []),
    ...((s.allOf as Json[]) ?? []),
    ...(s.items ? [s.items as Json] : []),
  ]
  return [s, ...children.flatMap((child) => reachable(child, seen))]
}

describe('the scopes the document states are the ones the service requires', () => {
  const scoped = () =>
    operations().flatMap(({ path, method, op }) => {
      const scopes = (op.security?.[0]?.bearerAuth ?? []) as Scope[]
      return scopes.map((missing) => ({ path, method, scopes, missing }))
    })

  it('a token lacking any one of an operation’s scopes gets 403 insufficient_scope; with them, no 401/403', async () => {
    const cases = scoped()
    expect(cases.length).toBeGreaterThan(9)
    for (const { path, method, scopes, missing } of cases) {
      const url = path.replace(/\{[^}]+\}/g, randomUUID())
      const without = await cloud.app.inject({
        method: method.toUpperCase() as 'GET' | 'POST',
        url,
        headers: bearer(await account.token(SCOPES.filter((scope) => scope !== missing))),
      })
      expectInjectedError(without, 'insufficient_scope', {
        required_scopes: scopes,
        missing_scopes: [missing],
      })
      const withThem = await cloud.app.inject({
        method: method.toUpperCase() as 'GET' | 'POST',
        url,
        headers: bearer(await account.token(scopes)),
      })
      expect([401, 403], `${method} ${path}`).not.toContain(withThem.statusCode)
    }
  })
})

describe('named types for generated clients', () => {
  it.each([
    ['/api/v1/print-jobs', 'post', '201', 'PrintJob'],
    ['/api/v1/print-jobs/from-url', 'post', '201', 'PrintJob'],
    ['/api/v1/print-jobs/from-base64', 'post', '201', 'PrintJob'],
    ['/api/v1/print-jobs/{printJobId}', 'get', '200', 'PrintJob'],
    ['/api/v1/print-jobs/{printJobId}/cancel', 'post', '202', 'PrintJob'],
    ['/api/v1/print-jobs', 'get', '200', 'PrintJobPage'],
    ['/api/v1/printers', 'get', '200', 'PrinterPage'],
    ['/api/v1/agents', 'get', '200', 'AgentPage'],
    ['/api/v1/documents', 'post', '201', 'Document'],
    ['/oauth/token', 'post', '200', 'TokenResponse'],
    ['/api/v1/printers', 'get', '4XX', 'Error'],
  ])('%s %s %s is #/components/schemas/%s', (path, method, status, name) => {
    const schema = operation(path, method).responses[status]?.content?.['application/json']?.schema
    expect(schema).toEqual({ $ref: `#/components/schemas/${name}` })
    expect(doc.components?.schemas?.[name]).toMatchObject({ title: name, type: 'object' })
  })

  it('names the shapes inside them too: Printer, Agent, the printer health and every enum', () => {
    const page = resolve({ $ref: '#/components/schemas/PrinterPage' })
    expect((page.properties as Record<string, Json>).data).toEqual({
      type: 'array',
      items: { $ref: '#/components/schemas/Printer' },
    })
    expect(Object.keys(doc.components?.schemas ?? {})).toEqual(
      expect.arrayContaining([
        'Agent',
        'Printer',
        'PrinterCapabilities',
        'PrinterHealth',
        'HealthState',
        'PrintJobStatus',
        'DocumentFormat',
        'RawLanguage',
        'WaitingReason',
      ]),
    )
  })

  it('every enum says its type', () => {
    const enums: Json[] = []
    const walk = (node: unknown) => {
      if (node === null || typeof node !== 'object') return
      if (Array.isArray((node as Json).enum)) enums.push(node as Json)
      for (const child of Object.values(node)) walk(child)
    }
    walk(doc)
    expect(enums.length).toBeGreaterThan(10)
    for (const schema of enums) expect(schema.type, JSON.stringify(schema)).toBe('string')
  })

  it('no response object forbids additional properties (spec: additive changes within v1)', () => {
    for (const { name, response } of responses()) {
      for (const media of Object.values(response.content ?? {})) {
        for (const schema of reachable(media.schema)) {
          expect(schema.additionalProperties, name).not.toBe(false)
        }
      }
    }
  })

  it('request bodies still refuse unknown fields, as the service does', () => {
    expect(jsonBody(operation('/api/v1/print-jobs', 'post')).additionalProperties).toBe(false)
  })

  it('the Error schema lists every error_code of the catalogue, open to additions', () => {
    const error = resolve({ $ref: '#/components/schemas/Error' })
    const code = (error.properties as Record<string, Json>).error_code as Json
    expect(code.type).toBe('string')
    expect(code['x-extensible-enum']).toEqual(Object.keys(ERROR_CODES))
    for (const name of Object.keys(ERROR_CODES)) expect(code.description).toContain(`\`${name}\``)
  })
})

describe('a truthful contract', () => {
  it('every response has its own description', () => {
    for (const { name, response } of responses()) {
      expect(response.description, name).not.toBe('Default Response')
      expect(response.description.length, name).toBeGreaterThan(10)
    }
  })

  it('every response declares X-Request-Id (at most 128 characters), required', () => {
    for (const { name, response } of responses()) {
      const header = headerOf(response, 'X-Request-Id')
      expect(header?.required, name).toBe(true)
      expect(header?.schema, name).toMatchObject({ type: 'string', maxLength: 128 })
    }
  })

  it('every operation takes an optional X-Request-Id of at most 128 characters', () => {
    for (const { path, method, op } of operations()) {
      const param = (op.parameters ?? []).map(resolve).find((p) => p.name === 'X-Request-Id')
      expect(param, `${method} ${path}`).toMatchObject({ in: 'header', required: false })
      expect(param?.schema, `${method} ${path}`).toMatchObject({ type: 'string', maxLength: 128 })
    }
  })

  it('every operation may answer 429 with Retry-After and the X-RateLimit headers, and 503 with Retry-After', () => {
    for (const { path, method, op } of operations()) {
      const limited = op.responses['429']
      expect(limited, `${method} ${path}`).toBeDefined()
      for (const name of [
        'Retry-After',
        'X-RateLimit-Limit',
        'X-RateLimit-Remaining',
        'X-RateLimit-Reset',
        'X-RateLimit-Scope',
      ]) {
        expect(headerOf(limited!, name)?.required, `${method} ${path} 429 ${name}`).toBe(true)
      }
      expect(headerOf(limited!, 'Retry-After')?.schema).toMatchObject({ type: 'integer', minimum: 1 })
      expect(headerOf(op.responses['503']!, 'Retry-After')?.required, `${method} ${path} 503`).toBe(true)
      expect(op.responses['4XX'], `${method} ${path}`).toBeDefined()
      expect(op.responses['5XX'], `${method} ${path}`).toBeDefined()
    }
  })

  it.each(CREATE_OPERATIONS)('%s (%s): the 201 may say Idempotent-Replayed', (path) => {
    const header = headerOf(operation(path, 'post').responses['201']!, 'Idempotent-Replayed')
    expect(header).toMatchObject({ required: false, schema: { type: 'string', enum: ['true'] } })
  })

  it('document_url is a uri and document_base64 is Base64 content whose line breaks are allowed', () => {
    const url = jsonBody(operation('/api/v1/print-jobs/from-url', 'post')).properties as Record<string, Json>
    const b64 = jsonBody(operation('/api/v1/print-jobs/from-base64', 'post')).properties as Record<
      string,
      Json
    >
    expect(url.document_url).toMatchObject({ type: 'string', format: 'uri' })
    // Not `format: byte` (RFC 4648 without line breaks): OpenAPI 3.1 says contentEncoding (issue 26, point 5).
    expect(b64.document_base64).toMatchObject({
      type: 'string',
      contentEncoding: 'base64',
      pattern: '^[A-Za-z0-9+/\\r\\n]*(?:=[\\r\\n]*){0,2}$',
    })
    expect(b64.document_base64?.format).toBeUndefined()
  })

  it('the token request requires grant_type client_credentials', () => {
    const body = operation('/oauth/token', 'post').requestBody?.content['application/x-www-form-urlencoded']
    const schema = resolve(body!.schema)
    expect(schema.required).toEqual(['grant_type'])
    expect((schema.properties as Record<string, Json>).grant_type).toEqual({
      type: 'string',
      enum: ['client_credentials'],
    })
  })

  it('the token and the enrollment answers say Cache-Control: no-store (RFC 6749 §5.1)', () => {
    const token = operation('/oauth/token', 'post').responses['200']!
    expect(headerOf(token, 'Cache-Control')).toMatchObject({ required: true, schema: { enum: ['no-store'] } })
    expect(headerOf(token, 'Pragma')).toMatchObject({ required: true, schema: { enum: ['no-cache'] } })
    const enrolled = operation('/agent-api/v1/enroll', 'post').responses['201']!
    expect(headerOf(enrolled, 'Cache-Control')).toMatchObject({
      required: true,
      schema: { enum: ['no-store'] },
    })
  })

  it('the hub’s document download is application/octet-stream with its SHA-256', () => {
    const ok = operation('/agent-api/v1/documents/{documentId}', 'get').responses['200']!
    expect(Object.keys(ok.content ?? {})).toEqual(['application/octet-stream'])
    expect(headerOf(ok, 'X-Content-SHA256')).toMatchObject({ required: true, schema: { type: 'string' } })
  })
})

describe('webhooks in the document', () => {
  const ENDPOINT = '/api/v1/webhook-endpoints'

  it('names every scope, webhooks:write included, in the client-credentials flow', () => {
    const flow = doc.components?.securitySchemes?.clientCredentials?.flows as Json
    const scopes = (flow.clientCredentials as Json).scopes as Json
    expect(Object.keys(scopes)).toEqual([...SCOPES])
    expect(scopes['webhooks:write']).toEqual(expect.stringContaining('webhook endpoints'))
  })

  it('shows the secret only in the answers to create and rotate', () => {
    const answer = (path: string, method: string, code: string) =>
      operation(path, method).responses[code]?.content?.['application/json']?.schema
    expect(answer(ENDPOINT, 'post', '201')).toEqual({
      $ref: '#/components/schemas/WebhookEndpointWithSecret',
    })
    expect(answer(`${ENDPOINT}/{webhookEndpointId}/rotate-secret`, 'post', '200')).toEqual({
      $ref: '#/components/schemas/WebhookEndpointWithSecret',
    })
    expect(answer(`${ENDPOINT}/{webhookEndpointId}`, 'get', '200')).toEqual({
      $ref: '#/components/schemas/WebhookEndpoint',
    })
    const withSecret = resolve({ $ref: '#/components/schemas/WebhookEndpointWithSecret' })
    const without = resolve({ $ref: '#/components/schemas/WebhookEndpoint' })
    expect(Object.keys(withSecret.properties as Json)).toContain('secret')
    expect(Object.keys(without.properties as Json)).not.toContain('secret')
    expect(answer(`${ENDPOINT}/{webhookEndpointId}/test`, 'post', '202')).toEqual({
      $ref: '#/components/schemas/WebhookDelivery',
    })
    expect(operation(`${ENDPOINT}/{webhookEndpointId}`, 'delete').responses['204']).toBeDefined()
  })

  it('create and rotate take an optional Idempotency-Key', () => {
    for (const path of [ENDPOINT, `${ENDPOINT}/{webhookEndpointId}/rotate-secret`]) {
      const params = operation(path, 'post').parameters ?? []
      const key = params.find((p) => p.in === 'header' && p.name === 'idempotency-key')
      expect(key, path).toMatchObject({ required: false })
      const responses = operation(path, 'post').responses
      const success = responses['201'] ?? responses['200']
      expect(Object.keys(success?.headers ?? {}), path).toContain('Idempotent-Replayed')
    }
  })

  it('describes each event type as an OpenAPI 3.1 webhook with its payload and signature headers', () => {
    const types = [...WEBHOOK_EVENT_TYPES, 'webhook.test']
    expect(Object.keys(doc.webhooks ?? {})).toEqual(types)
    const families: Record<string, [string, string]> = {
      print_job: ['PrintJobWebhookEvent', 'PrintJob'],
      printer: ['PrinterWebhookEvent', 'Printer'],
      agent: ['AgentWebhookEvent', 'Agent'],
      webhook: ['TestWebhookEvent', ''],
    }
    for (const type of types) {
      const op = doc.webhooks?.[type]?.post
      expect(op, type).toBeDefined()
      const [component, data] = families[type.split('.')[0]!]!
      expect(op!.requestBody?.content['application/json']?.schema).toEqual({
        $ref: `#/components/schemas/${component}`,
      })
      const headers = (op!.parameters ?? []).filter((p) => p.in === 'header').map((p) => p.name)
      expect(headers).toEqual(['webhook-id', 'webhook-timestamp', 'webhook-signature'])
      const body = resolve({ $ref: `#/components/schemas/${component}` })
      const [base, narrowed] = body.allOf as Json[]
      expect(base).toEqual({ $ref: '#/components/schemas/WebhookEvent' })
      const props = narrowed!.properties as Record<string, Json>
      expect(props.type!.enum).toContain(type)
      if (data) expect(props.data!.$ref).toBe(`#/components/schemas/${data}`)
    }
    const event = resolve({ $ref: '#/components/schemas/WebhookEvent' })
    expect((event.required as string[]).sort()).toEqual(['account_id', 'data', 'id', 'timestamp', 'type'])
  })
})
