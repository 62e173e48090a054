import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestCloud, type TestCloud } from '../test-cloud.ts'
import { listen } from './api-helpers.ts'

// GET /openapi.json: an OpenAPI 3.1 document generated from the same schemas, with the spec's operation ids.

type Json = Record<string, unknown>
interface Operation extends Json {
  operationId?: string
  parameters?: Json[]
  requestBody?: { content: Record<string, { schema: Json }> }
  responses: Record<string, { content?: Record<string, { schema: Json }> }>
  security?: Record<string, string[]>[]
}
interface OpenApiDocument {
  openapi: string
  info: Json
  paths: Record<string, Record<string, Operation>>
  components?: { schemas?: Record<string, Json>; securitySchemes?: Record<string, Json> }
}

/** The spec's print job fields (Resources → Print job), each always present. */
/** Why a job waits (issue 7.6), additive within v1. */
const ADDITIVE_PRINT_JOB_FIELDS = ['waiting_reason']
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
let doc: OpenApiDocument
let status: number
let contentType: string | null
beforeAll(async () => {
  cloud = await startTestCloud()
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

  it('has the bearerAuth security scheme, required by every /api/v1 operation', () => {
    expect(doc.components?.securitySchemes?.bearerAuth).toMatchObject({ type: 'http', scheme: 'bearer' })
    for (const [path, methods] of Object.entries(doc.paths)) {
      if (!path.startsWith('/api/v1/')) continue
      for (const [method, op] of Object.entries(methods)) {
        expect(op.security, `${method} ${path}`).toEqual([{ bearerAuth: [] }])
      }
    }
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
