import { ERROR_CODES } from '../../protocol/errors.ts'

type Schema = Record<string, unknown>
interface OpenApiDocument {
  paths: Record<string, Record<string, { responses?: Record<string, { content?: Record<string, Media> }> }>>
  /** OpenAPI 3.1: what the service sends (webhook events); their request bodies are named as answers are. */
  webhooks?: Record<string, Record<string, { requestBody?: { content?: Record<string, Media> } }>>
  components: { schemas?: Record<string, Schema> }
}
interface Media {
  schema?: Schema
}

const SCHEMA_MAPS = ['properties', 'patternProperties', '$defs'] as const
const SCHEMA_LISTS = ['anyOf', 'oneOf', 'allOf', 'prefixItems'] as const
const SCHEMA_SLOTS = ['items', 'additionalProperties', 'not', 'contains'] as const

/** A copy of `schema` with `map` applied to each direct subschema. */
function mapSubschemas(schema: Schema, map: (sub: Schema) => Schema): Schema {
  const out: Schema = { ...schema }
  for (const key of SCHEMA_MAPS) {
    const subs = schema[key] as Record<string, Schema> | undefined
    if (subs) out[key] = Object.fromEntries(Object.entries(subs).map(([name, sub]) => [name, map(sub)]))
  }
  for (const key of SCHEMA_LISTS) {
    const subs = schema[key] as Schema[] | undefined
    if (subs) out[key] = subs.map(map)
  }
  for (const key of SCHEMA_SLOTS) {
    const sub = schema[key]
    if (sub !== null && typeof sub === 'object') out[key] = map(sub as Schema)
  }
  return out
}

/** TypeBox writes enums without `type`; generators need it to type the values. Walks the whole document. */
export function typeEnums(node: unknown): void {
  if (node === null || typeof node !== 'object') return
  for (const child of Object.values(node)) typeEnums(child)
  const schema = node as Schema
  const values = schema.enum
  if (!Array.isArray(values) || schema.type !== undefined) return
  if (values.every((v) => typeof v === 'string')) schema.type = 'string'
  else if (values.every((v) => Number.isInteger(v))) schema.type = 'integer'
  else if (values.every((v) => typeof v === 'number')) schema.type = 'number'
}

/**
 * The characters of Base64 text the service decodes (print-api/documents/base64.ts): the RFC 4648 §4 alphabet and
 * line breaks, then at most two `=` (line breaks may follow each). The decoder also checks the groups of four;
 * this pattern is the part a client can check cheaply: only character classes repeat, so it runs in linear time
 * without a backtracking stack on a document of many MiB.
 */
export const BASE64_TEXT_PATTERN = '^[A-Za-z0-9+/\\r\\n]*(?:=[\\r\\n]*){0,2}$'

/**
 * Describes Base64 text as OpenAPI 3.1 does: @fastify/swagger writes a schema's `contentEncoding: base64` as
 * OpenAPI 3.0's `format: byte`, which means RFC 4648 text without line breaks (and which some validators check
 * as `^[\w\d+/=]*$`, refusing line breaks and allowing `_`); it goes back to `contentEncoding` (JSON Schema
 * 2020-12 §8.3) with BASE64_TEXT_PATTERN. The pattern is in the document only: in the route schema it would
 * make the validator answer 422, where the spec wants 400 (invalid Base64) from the decoder. Walks the whole
 * document.
 */
export function describeBase64Text(node: unknown): void {
  if (node === null || typeof node !== 'object') return
  for (const child of Object.values(node)) describeBase64Text(child)
  const schema = node as Schema
  if (schema.type !== 'string' || (schema.format !== 'byte' && schema.contentEncoding !== 'base64')) return
  delete schema.format
  schema.contentEncoding = 'base64'
  schema.pattern ??= BASE64_TEXT_PATTERN
}

/**
 * TypeBox can describe a field whose type is a named schema (an enum) only by wrapping it: `anyOf` with that
 * one schema, and the description beside it. OpenAPI 3.1 lets a schema sit beside its description (even a
 * `$ref`, JSON Schema 2020-12 §8.2.3.1), so each lone `anyOf` is merged into its parent, the parent's
 * keywords winning. Walks the whole document; run it after the names are hoisted, so the enum stays one
 * component.
 */
export function mergeLoneAnyOf(node: unknown): void {
  if (node === null || typeof node !== 'object') return
  for (const child of Object.values(node)) mergeLoneAnyOf(child)
  const schema = node as Schema
  const only = schema.anyOf
  if (!Array.isArray(only) || only.length !== 1) return
  delete schema.anyOf
  for (const [key, value] of Object.entries(only[0] as Schema)) if (!(key in schema)) schema[key] = value
}

/**
 * Responses may gain fields within v1 (spec: Versioning), so the document does not promise their absence;
 * the service's serializer still sends only the fields of its schemas.
 */
function openObjects(schema: Schema): Schema {
  const out = mapSubschemas(schema, openObjects)
  if (out.additionalProperties === false) delete out.additionalProperties
  return out
}

/** Replaces each titled subschema by a reference to `components.schemas[title]`, bottom up. */
function hoistTitled(schema: Schema, components: Record<string, Schema>): Schema {
  const out = mapSubschemas(schema, (sub) => hoistTitled(sub, components))
  const title = out.title
  if (typeof title !== 'string') return out
  const known = components[title]
  if (known && JSON.stringify(known) !== JSON.stringify(out)) {
    throw new Error(`OpenAPI: two different schemas are titled ${title}`)
  }
  components[title] = out
  return { $ref: `#/components/schemas/${encodeURIComponent(title)}` }
}

/** The catalogue of `error_code` values, open to additions within v1 (protocol/errors.ts). */
function listErrorCodes(error: Schema): void {
  const properties = error.properties as Record<string, Schema>
  const codes = Object.entries(ERROR_CODES)
  properties.error_code = {
    ...properties.error_code,
    description:
      'A stable code; new codes may be added within v1, so treat an unknown one by its HTTP status. ' +
      `The codes:\n\n${codes.map(([code, e]) => `- \`${code}\` (${e.status}): ${e.description}`).join('\n')}`,
    'x-extensible-enum': codes.map(([code]) => code),
  }
}

/**
 * Names the shapes of responses: each titled schema in a response (PrintJob, Printer, Error, the enums, ...)
 * becomes a component a generated client can import. Request bodies and parameters stay inline, as clients
 * send them (and as the property tests read them); the bodies of `webhooks`, which the service sends, are
 * named as answers are.
 */
export function nameResponseSchemas(doc: OpenApiDocument): void {
  const components: Record<string, Schema> = { ...doc.components.schemas }
  for (const methods of Object.values(doc.paths)) {
    for (const op of Object.values(methods)) {
      for (const response of Object.values(op.responses ?? {})) {
        for (const media of Object.values(response.content ?? {})) {
          if (media.schema) media.schema = hoistTitled(openObjects(media.schema), components)
        }
      }
    }
  }
  for (const methods of Object.values(doc.webhooks ?? {})) {
    for (const op of Object.values(methods)) {
      for (const media of Object.values(op.requestBody?.content ?? {})) {
        if (media.schema) media.schema = hoistTitled(openObjects(media.schema), components)
      }
    }
  }
  if (components.Error) listErrorCodes(components.Error)
  doc.components.schemas = Object.fromEntries(
    Object.entries(components).sort(([a], [b]) => a.localeCompare(b)),
  )
}
