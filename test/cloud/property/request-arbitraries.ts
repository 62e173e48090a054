import { randomUUID } from 'node:crypto'
import fc from 'fast-check'
import { makePdf } from '../../helpers/pdf.ts'
import { ESCPOS_RECEIPT } from '../test-cloud.ts'

// Generators of HTTP requests for the property tests: bodies, headers and query strings that are sometimes
// valid and sometimes anything at all, derived from the operation's own OpenAPI description.

/** The subset of JSON Schema the route schemas use (as served in the OpenAPI document). */
export interface JsonSchema {
  type?: string
  enum?: unknown[]
  format?: string
  minimum?: number
  maximum?: number
  minLength?: number
  maxLength?: number
  anyOf?: JsonSchema[]
  properties?: Record<string, JsonSchema>
  required?: string[]
}

/** Ids the generated requests draw on, so that some reach past validation into the handlers. */
export interface IdPool {
  /** This account's ids by kind. */
  printers: string[]
  documents: string[]
  jobs: string[]
  agents: string[]
  /** File names of the published release's installers. */
  installers: string[]
  /** Another account's ids (never disclosed). */
  foreign: string[]
  /** The partner application's managed accounts, their enrollments, and app installations. */
  relationships?: string[]
  enrollments?: string[]
  installations?: string[]
}

export interface GeneratedRequest {
  method: string
  url: string
  headers: Record<string, string>
  payload?: string | Buffer
}

const MiB = 1024 * 1024

const HUGE_NUMBER_LITERALS = [
  '1e309',
  '-1e309',
  '9007199254740993',
  '1e-400',
  '-0',
  '0.1e99999',
  '1'.repeat(400),
]

/** Text of every kind: ASCII, control characters, any Unicode (lone surrogates included), long runs. */
const anyText = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.string({
    unit: fc.constantFrom('\u0000', '\u202e', '\ud800', '\uffff', '%', '\\', '"', '/', '..'),
    maxLength: 20,
  }),
  fc.integer({ min: 129, max: 70_000 }).map((n) => 'x'.repeat(n)),
)

/** Any JSON value: wrong types, huge and tiny numbers, unicode, nesting. */
const anyJson: fc.Arbitrary<unknown> = fc.oneof(
  fc.jsonValue({ maxDepth: 4 }),
  fc.constantFrom(
    Number.MAX_VALUE,
    -Number.MAX_VALUE,
    Number.MIN_VALUE,
    2 ** 53 + 1,
    -(2 ** 63),
    0.1,
    1.5,
    100.0000001,
    -1,
    0,
    true,
    null,
  ),
  anyText,
)

/** RFC 3986 §2.1 percent-encoding of the UTF-8 bytes (a lone surrogate becomes U+FFFD, as on the wire). */
function percentEncode(text: string): string {
  let out = ''
  for (const byte of Buffer.from(text, 'utf8')) {
    const c = String.fromCharCode(byte)
    out += /[A-Za-z0-9\-._~]/.test(c) ? c : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`
  }
  return out
}

const uuidString = fc.uuid().map((u) => u.toString())

/** An id for a field or parameter: usually of the kind its name says, sometimes another one or none. */
function pooledId(pool: IdPool, name: string): fc.Arbitrary<string> {
  const partnerKind = /^action$/.test(name)
    ? ['suspend', 'resume', 'close']
    : /relationship/i.test(name)
      ? pool.relationships
      : /enrollment/i.test(name)
        ? pool.enrollments
        : /installation/i.test(name)
          ? pool.installations
          : undefined
  const kind = partnerKind?.length
    ? partnerKind
    : /filename/i.test(name)
      ? pool.installers
      : /printer/i.test(name)
        ? pool.printers
        : /document/i.test(name)
          ? pool.documents
          : /job/i.test(name)
            ? pool.jobs
            : [...pool.printers, ...pool.documents, ...pool.jobs, ...pool.agents]
  return fc.oneof(
    { weight: 8, arbitrary: fc.constantFrom(...kind) },
    { weight: 1, arbitrary: fc.constantFrom(...pool.agents, ...pool.jobs, ...pool.printers) },
    { weight: 1, arbitrary: fc.constantFrom(...pool.foreign) },
    { weight: 1, arbitrary: uuidString },
    {
      weight: 1,
      arbitrary: fc.constantFrom(randomUUID().toUpperCase(), '00000000-0000-0000-0000-000000000000'),
    },
  )
}

/** An ESC/POS document of `size` bytes: a receipt followed by lines of text. */
function largeEscpos(size: number): Buffer {
  const text = Buffer.from('Item 0001 ...................... 12.50\n'.repeat(Math.ceil(size / 39)), 'ascii')
  return Buffer.concat([ESCPOS_RECEIPT, text]).subarray(0, size)
}

/** Base64 of ESC/POS receipts, one of them several MiB. */
export const escposBase64 = fc.oneof(
  { weight: 4, arbitrary: fc.constant(ESCPOS_RECEIPT.toString('base64')) },
  { weight: 1, arbitrary: fc.constant(largeEscpos(12 * MiB).toString('base64')) },
)

/** Base64 of documents that pass inspection: ESC/POS receipts (one of several MiB), a PDF. */
const validBase64 = fc.oneof(
  { weight: 6, arbitrary: fc.constant(ESCPOS_RECEIPT.toString('base64')) },
  { weight: 2, arbitrary: fc.constant(makePdf(1).toString('base64')) },
  { weight: 1, arbitrary: fc.constant(largeEscpos(12 * MiB).toString('base64')) },
)

/** Base64 text: valid documents (ESC/POS, PDF), near misses, and anything else. */
export const base64Text: fc.Arbitrary<string> = fc.oneof(
  validBase64,
  fc.uint8Array({ maxLength: 300 }).map((bytes) => Buffer.from(bytes).toString('base64')),
  fc.uint8Array({ minLength: 1, maxLength: 300 }).map((bytes) =>
    Buffer.from(bytes)
      .toString('base64')
      .replace(/(.{76})/g, '$1\r\n'),
  ),
  fc.integer({ min: 1, max: 3 * MiB }).map((size) => Buffer.alloc(size, 0x41).toString('base64')),
  fc.constantFrom('data:application/pdf;base64,JVBERi0=', 'QUJD=', 'QQ', '====', '\n', 'QUJ-', 'QUJ_'),
  fc.constant(`${'A'.repeat(4 * 200_000)}=`),
  fc.string({ unit: fc.constantFrom('A', '=', '+', '/', '\n', '\r', ' ', '-'), maxLength: 64 }),
  anyText,
)

const documentUrl = fc.oneof(
  fc.constantFrom(
    'https://documents.example/receipt.pdf',
    'https://documents.example:8443/a?b=c#d',
    'http://documents.example/receipt.pdf',
    'https://user:pass@documents.example/',
    'https://127.0.0.1/x',
    'https://[::1]/x',
    'https://[::ffff:10.0.0.1]/x',
    'https://0x7f.1/x',
    'https://localhost./x',
    'https://xn--nxasmq6b.example/',
    'https://a..b/x',
    'file:///etc/passwd',
    'javascript:alert(1)',
    'https://[::1',
    'https:///x',
  ),
  fc.webUrl({ withQueryParameters: true, withFragments: true }),
  anyText,
)

/** A value the schema accepts (for document_base64 and document_url: plausible ones, good or bad). */
function validValueFor(schema: JsonSchema, name: string, pool: IdPool): fc.Arbitrary<unknown> {
  if (name === 'document_base64') return validBase64
  if (name === 'document_url') return documentUrl
  if (schema.enum) return fc.constantFrom(...schema.enum)
  if (schema.anyOf) return fc.oneof(...schema.anyOf.map((s) => validValueFor(s, name, pool)))
  switch (schema.type) {
    case 'null':
      return fc.constant(null)
    case 'boolean':
      return fc.boolean()
    case 'integer':
      return fc.integer({ min: Math.ceil(schema.minimum ?? -1e6), max: Math.floor(schema.maximum ?? 1e6) })
    case 'number':
      return fc.double({ min: schema.minimum ?? -1e6, max: schema.maximum ?? 1e6, noNaN: true })
    case 'string':
      if (schema.format === 'uuid') return pooledId(pool, name)
      return fc.string({ minLength: Math.max(1, schema.minLength ?? 0), maxLength: schema.maxLength ?? 40 })
    case 'object':
      return validObjectFor(schema, pool)
    default:
      return anyJson
  }
}

/** A value the schema nearly accepts: just out of bounds, too long, the wrong case, the wrong type. */
function nearMissFor(schema: JsonSchema, name: string): fc.Arbitrary<unknown> {
  if (name === 'document_base64') return base64Text
  const misses: unknown[] = [null, '', '1', 1, [], {}]
  if (schema.enum) misses.push(...schema.enum.map((v) => String(v).toUpperCase()), `${schema.enum[0]} `)
  if (schema.minimum !== undefined)
    misses.push(schema.minimum - 1, schema.minimum - 1e-9, String(schema.minimum))
  if (schema.maximum !== undefined)
    misses.push(schema.maximum + 1, schema.maximum + 0.5, schema.maximum * 1e300)
  if (schema.maxLength !== undefined) misses.push('x'.repeat(schema.maxLength + 1))
  if (schema.format === 'uuid') misses.push(randomUUID().slice(1), `${randomUUID()}\n`, '{uuid}')
  return fc.oneof(fc.constantFrom(...misses), anyJson)
}

/** A valid object: every required property, each optional one now and then. */
function validObjectFor(schema: JsonSchema, pool: IdPool): fc.Arbitrary<Record<string, unknown>> {
  const required = new Set(schema.required ?? [])
  const entries = Object.entries(schema.properties ?? {}).map(([name, property]) => {
    const entry = validValueFor(property, name, pool).map((value): readonly [string, unknown] => [
      name,
      value,
    ])
    return required.has(name) ? entry : fc.option(entry, { freq: 2, nil: null })
  })
  return fc.tuple(...entries).map((chosen) => Object.fromEntries(chosen.filter((entry) => entry !== null)))
}

const STRANGER_KEYS = ['__proto__', 'constructor', 'prototype', 'extra', '', 'copies ', 'Copies']

/** A valid object with one to three properties replaced by near misses, dropped, or strangers added. */
function mutatedObjectFor(schema: JsonSchema, pool: IdPool): fc.Arbitrary<Record<string, unknown>> {
  const properties = Object.entries(schema.properties ?? {})
  type Mutation = (object: Record<string, unknown>) => void
  const mutation: fc.Arbitrary<Mutation> = fc.oneof(
    ...properties.map(([name, property]) =>
      nearMissFor(property, name).map(
        (value): Mutation =>
          (object) => {
            object[name] = value
          },
      ),
    ),
    ...properties.map(([name]) =>
      fc.constant<Mutation>((object) => {
        delete object[name]
      }),
    ),
    fc.tuple(fc.constantFrom(...STRANGER_KEYS), anyJson).map(
      ([key, value]): Mutation =>
        (object) => {
          Object.defineProperty(object, key, { value, enumerable: true, writable: true, configurable: true })
        },
    ),
  )
  return fc
    .tuple(validObjectFor(schema, pool), fc.array(mutation, { minLength: 1, maxLength: 3 }))
    .map(([object, mutations]) => {
      for (const mutate of mutations) mutate(object)
      return object
    })
}

/** JSON text that `JSON.stringify` cannot produce: huge number literals, deep nesting, broken syntax. */
const oddJsonText = fc.oneof(
  fc.constantFrom(...HUGE_NUMBER_LITERALS).map((n) => `{"copies": ${n}, "dpi": ${n}}`),
  fc.integer({ min: 1, max: 20_000 }).map((depth) => `${'['.repeat(depth)}${']'.repeat(depth)}`),
  fc.integer({ min: 1, max: 20_000 }).map((depth) => `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`),
  fc.constantFrom('', '{', '{"a":1,}', '\ufeff{}', '{"a":1}{"b":2}', 'nul', '{"a":"\\ud800"}', '\u0000'),
  anyText,
)

/**
 * A JSON body for the schema. `wellFormed`: always one it accepts, with `coherent` fields laid over it (a
 * document and a printer that fit each other, which the schema cannot say).
 */
export function jsonBody(
  schema: JsonSchema | undefined,
  pool: IdPool,
  wellFormed = false,
  coherent: fc.Arbitrary<Record<string, unknown>> = fc.constant({}),
): fc.Arbitrary<string> {
  const valid = schema ? validValueFor(schema, '', pool) : anyJson
  if (wellFormed) {
    return fc
      .tuple(valid, fc.option(coherent, { freq: 4, nil: null }))
      .map(([value, fields]) =>
        JSON.stringify(fields && typeof value === 'object' ? { ...value, ...fields } : value),
      )
  }
  const mutated = schema?.type === 'object' ? mutatedObjectFor(schema, pool) : anyJson
  return fc.oneof(
    { weight: 6, arbitrary: valid.map((value) => JSON.stringify(value) ?? 'null') },
    { weight: 3, arbitrary: mutated.map((value) => JSON.stringify(value) ?? 'null') },
    { weight: 1, arbitrary: anyJson.map((value) => JSON.stringify(value) ?? 'null') },
    { weight: 1, arbitrary: oddJsonText },
  )
}

export function formBody(
  schema: JsonSchema | undefined,
  credentials: fc.Arbitrary<string>[],
): fc.Arbitrary<string> {
  const names = Object.keys(schema?.properties ?? {})
  const value = fc.oneof(
    fc.constantFrom('client_credentials', 'password', 'printers:read print_jobs:write'),
    ...credentials,
    anyText,
  )
  const pair = fc.tuple(fc.oneof(fc.constantFrom(...names, 'x', 'scope[]'), anyText), value, fc.boolean())
  return fc.oneof(
    fc
      .array(pair, { maxLength: 6 })
      .map((pairs) =>
        pairs
          .map(([k, v, encode]) => (encode ? `${percentEncode(k)}=${percentEncode(v)}` : `${k}=${v}`))
          .join('&'),
      ),
    anyText,
  )
}

const BOUNDARY = 'property-test-boundary'

/** A multipart body: parts named as the upload expects (or not), with documents, junk, truncation. */
export const multipartBody: fc.Arbitrary<Buffer> = (() => {
  const content = fc.oneof(
    fc.constant(ESCPOS_RECEIPT),
    fc.constant(makePdf(1)),
    fc.constant(Buffer.from('%PDF-1.7\n%broken')),
    fc.uint8Array({ maxLength: 200 }).map((bytes) => Buffer.from(bytes)),
    fc.constant(Buffer.alloc(0)),
  )
  const part = fc.tuple(
    fc.constantFrom('file', 'document_format', 'document_raw_language', 'other', ''),
    fc.boolean(),
    fc.oneof(
      content,
      fc.constantFrom('raw', 'pdf', 'escpos', 'zpl', 'PDF').map((s) => Buffer.from(s)),
    ),
    fc.oneof(fc.constantFrom('receipt.bin', 'a.pdf', '', '../../etc/passwd', 'ü.pdf'), anyText),
  )
  return fc.tuple(fc.array(part, { maxLength: 4 }), fc.integer({ min: 0, max: 5 })).map(([parts, cut]) => {
    const chunks: Buffer[] = []
    for (const [name, isFile, bytes, filename] of parts) {
      const disposition = isFile
        ? `form-data; name="${name}"; filename="${filename.replaceAll('"', '')}"`
        : `form-data; name="${name}"`
      chunks.push(Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: ${disposition}\r\n\r\n`, 'latin1'))
      chunks.push(bytes, Buffer.from('\r\n'))
    }
    chunks.push(Buffer.from(`--${BOUNDARY}--\r\n`))
    const body = Buffer.concat(chunks)
    // Now and then the body stops early (a client that hung up mid-upload).
    return cut === 0 ? body.subarray(0, Math.floor(body.length / 2)) : body
  })
})()

export const MULTIPART_TYPE = `multipart/form-data; boundary=${BOUNDARY}`

/** A header value as HTTP can carry it: tab, visible ASCII, obs-text (RFC 9110 §5.5), of any length. */
export const headerValue: fc.Arbitrary<string> = fc.oneof(
  fc.string({
    unit: fc.oneof(
      fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)),
      fc.integer({ min: 0x80, max: 0xff }).map((c) => String.fromCharCode(c)),
      fc.constant('\t'),
    ),
    maxLength: 300,
  }),
  fc.integer({ min: 120, max: 4000 }).map((n) => 'k'.repeat(n)),
  fc.constantFrom('order-1001', 'a', 'A-Za-z0-9._:-'),
)

/** A Content-Type: null (usually) for the body's own type, else a variant, none, or anything. */
export function contentTypeVariants(): fc.Arbitrary<string | undefined | null> {
  return fc.oneof(
    { weight: 12, arbitrary: fc.constant(null) },
    {
      weight: 3,
      arbitrary: fc.constantFrom(
        undefined,
        'application/json',
        'application/json; charset=utf-8',
        'APPLICATION/JSON',
        'application/json;charset=latin1',
        'application/json; charset="utf-16"',
        'application/problem+json',
        'application/x-www-form-urlencoded',
        'multipart/form-data',
        MULTIPART_TYPE,
        'text/plain',
        'application/octet-stream',
        '',
        ';',
        'application/json; boundary',
      ),
    },
    { weight: 1, arbitrary: headerValue },
  )
}

/** An Authorization header: usually the right credential, sometimes garbage. */
export function authorizationVariants(valid: string | undefined): fc.Arbitrary<string | undefined> {
  const garbage = fc.oneof(
    fc.constantFrom(undefined, '', 'Bearer', 'Bearer ', 'Basic', 'Basic !!!', 'Bearer a b', 'bearer ===='),
    headerValue.map((v) => `Bearer ${v}`),
    headerValue.map((v) => `Basic ${Buffer.from(v, 'latin1').toString('base64')}`),
    headerValue,
  )
  if (valid === undefined) return garbage
  return fc.oneof({ weight: 9, arbitrary: fc.constant(valid) }, { weight: 1, arbitrary: garbage })
}

/**
 * A generated value as query text. An object's JSON text, since String() throws on the objects
 * fc.jsonValue makes with an own key named toString or valueOf.
 */
export function queryText(value: unknown): string {
  if (typeof value === 'object' && value !== null && !Array.isArray(value)) return JSON.stringify(value)
  return Array.isArray(value) ? value.map(queryText).join(',') : String(value)
}

const queryValue = (schema: JsonSchema | undefined, name: string, pool: IdPool) =>
  fc.oneof(
    { weight: 10, arbitrary: (schema ? validValueFor(schema, name, pool) : anyText).map(queryText) },
    { weight: 1, arbitrary: (schema ? nearMissFor(schema, name) : anyText).map(queryText) },
    {
      weight: 2,
      arbitrary: fc.constantFrom('', '0', '-1', '101', '1e3', '2.5', 'NaN', ...HUGE_NUMBER_LITERALS),
    },
    { weight: 1, arbitrary: anyText },
  )

/** A query string from the operation's query parameters (plus strangers, repeats and bad escapes). */
export function queryString(
  params: { name: string; schema?: JsonSchema }[],
  pool: IdPool,
  wellFormed = false,
): fc.Arbitrary<string> {
  const declared = params.map((p) => p.name)
  const schemaOf = new Map(params.map((p) => [p.name, p.schema]))
  if (wellFormed) {
    const entries = params.map((p) =>
      fc.option(
        (p.schema ? validValueFor(p.schema, p.name, pool) : anyText).map(
          (value) => `${p.name}=${percentEncode(queryText(value))}`,
        ),
        { nil: null },
      ),
    )
    return fc.tuple(...entries).map((pairs) => {
      const present = pairs.filter((pair) => pair !== null)
      return present.length === 0 ? '' : `?${present.join('&')}`
    })
  }
  const strangers = fc.constantFrom('limit', 'cursor', 'status', 'printer_id', 'x', '', '__proto__')
  const keys =
    declared.length === 0
      ? strangers
      : fc.oneof({ weight: 8, arbitrary: fc.constantFrom(...declared) }, strangers)
  const pair = keys
    .chain((name) =>
      fc.tuple(fc.constant(name), queryValue(schemaOf.get(name), name, pool), fc.integer({ min: 0, max: 9 })),
    )
    .map(([name, value, roll]) => {
      if (roll === 0) return `${name}=${value}` // raw: bad percent-escapes, spaces, '#'
      if (roll === 1) return `${name}[]=${percentEncode(value)}`
      return `${name}=${percentEncode(value)}`
    })
  return fc.array(pair, { maxLength: 3 }).map((pairs) => (pairs.length === 0 ? '' : `?${pairs.join('&')}`))
}

/** A path parameter: an id of the pool, or anything (escaped or raw). */
export function pathSegment(pool: IdPool, name: string, wellFormed = false): fc.Arbitrary<string> {
  if (wellFormed) return pooledId(pool, name)
  return fc.oneof(
    { weight: 6, arbitrary: pooledId(pool, name) },
    { weight: 2, arbitrary: anyText.map((s) => percentEncode(s) || 'x') },
    { weight: 1, arbitrary: fc.constantFrom('%E0%A4%A', '..%2f..%2fetc', '%00', 'a%2Fb', '%25') },
  )
}
