import { Ajv2020 } from 'ajv/dist/2020.js'
import addFormats from 'ajv-formats'
import type { Middleware } from 'openapi-fetch'

// Checks answers against the OpenAPI document they were generated from: the status is one the operation
// declares, each required header is there, each header and the body match their schemas (the document's
// own, $refs and all, compiled by Ajv as JSON Schema 2020-12, the dialect of OpenAPI 3.1). Request bodies
// too (`checkRequest`), as a client validating against the document would check them before sending.

type Json = Record<string, unknown>
interface Header {
  required?: boolean
  schema?: Json
  $ref?: string
}
interface ResponseObject {
  headers?: Record<string, Header>
  content?: Record<string, unknown>
}
interface OpenApiDocument {
  paths: Record<string, Record<string, { operationId: string; responses: Record<string, ResponseObject> }>>
  components?: { headers?: Record<string, Header> }
}

export interface ContractCheck {
  operationId: string
  status: number
  problems: string[]
}

/** A JSON pointer as a URI fragment (RFC 6901 §6). */
const pointer = (...parts: string[]) =>
  `#/${parts.map((p) => encodeURIComponent(p.replaceAll('~', '~0').replaceAll('/', '~1'))).join('/')}`

/**
 * `byte` as the OpenAPI format registry defines it: Base64 of RFC 4648 (§4, padded, and §3.1: no line breaks).
 * ajv-formats' own `byte` tests each line on its own (its expression has the `m` flag), which a client's
 * validator does not; this is the strict reading a client may make of a document that says `byte`.
 */
const RFC_4648_BYTE = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/

export function contractChecker(document: OpenApiDocument) {
  const DOC = 'openapi.json'
  const bodies = new Ajv2020({ strict: false, allErrors: true })
  // Header values are text; their schemas say integer or string.
  const headers = new Ajv2020({ strict: false, allErrors: true, coerceTypes: true })
  for (const ajv of [bodies, headers]) {
    addFormats.default(ajv)
    ajv.addFormat('byte', RFC_4648_BYTE)
    ajv.addSchema(document, DOC)
  }
  const resolveHeader = (header: Header): Header => {
    if (!header.$ref) return header
    const name = header.$ref.replace('#/components/headers/', '')
    const target = document.components?.headers?.[name]
    if (!target) throw new Error(`unresolved ${header.$ref}`)
    return resolveHeader(target)
  }

  async function check(method: string, schemaPath: string, response: Response): Promise<ContractCheck> {
    const op = document.paths[schemaPath]?.[method.toLowerCase()]
    const status = response.status
    const problems: string[] = []
    const done = (operationId: string, problem?: string) => {
      if (problem) problems.push(problem)
      return { operationId, status, problems }
    }
    if (!op) return done(`${method} ${schemaPath}`, 'no such operation in the document')
    const statusKey = [String(status), `${String(status)[0]}XX`, 'default'].find((key) => op.responses[key])
    if (!statusKey) return done(op.operationId, `status ${status} is not documented`)
    const declared = op.responses[statusKey]!
    for (const [name, header] of Object.entries(declared.headers ?? {})) {
      const { required, schema } = resolveHeader(header)
      const value = response.headers.get(name)
      if (value === null) {
        if (required) problems.push(`header ${name} is missing`)
        continue
      }
      const validate = headers.compile({ type: 'object', properties: { value: schema ?? {} } })
      if (!validate({ value })) problems.push(`header ${name}: ${headers.errorsText(validate.errors)}`)
    }
    const mediaType = (response.headers.get('content-type') ?? '').split(';')[0]!.trim()
    const text = await response.text()
    if (!declared.content) return done(op.operationId, text === '' ? undefined : 'an undocumented body')
    if (!(mediaType in declared.content))
      return done(op.operationId, `content type ${mediaType} is not documented`)
    if (mediaType === 'application/json') {
      const ref = `${DOC}${pointer('paths', schemaPath, method.toLowerCase(), 'responses', statusKey, 'content', mediaType, 'schema')}`
      const validate = bodies.compile({ $ref: ref })
      if (!validate(JSON.parse(text))) problems.push(`body: ${bodies.errorsText(validate.errors)}`)
    }
    return done(op.operationId)
  }

  /** What the document says of a request body: the problems a client validating against it would find. */
  function checkRequest(method: string, schemaPath: string, mediaType: string, body: unknown): string[] {
    const op = document.paths[schemaPath]?.[method.toLowerCase()] as
      | { requestBody?: { content?: Record<string, unknown> } }
      | undefined
    if (!op?.requestBody?.content?.[mediaType])
      return [`no ${mediaType} request body for ${method} ${schemaPath}`]
    const ref = `${DOC}${pointer('paths', schemaPath, method.toLowerCase(), 'requestBody', 'content', mediaType, 'schema')}`
    const validate = bodies.compile({ $ref: ref })
    return validate(body) ? [] : [bodies.errorsText(validate.errors)]
  }

  const checks: ContractCheck[] = []
  const middleware: Middleware = {
    onResponse: async ({ request, response, schemaPath }) => {
      checks.push(await check(request.method, schemaPath, response.clone()))
    },
  }
  return { check, checkRequest, checks, middleware }
}
