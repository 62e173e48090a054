import type { FastifyContextConfig, FastifySchema } from 'fastify'
import type { TSchema } from 'typebox'
import {
  IdempotentReplayed,
  RATE_LIMIT_HEADERS,
  RequestId,
  RetryAfter,
  WwwAuthenticate,
} from '../../protocol/http-headers.ts'

type Json = Record<string, unknown>
export type SecurityRequirement = Record<string, string[]>

/** What a route's config says that its operation must show; carried from `transform` to `transformObject`. */
interface RouteFacts {
  scopes: string[] | null
  hubAuth: boolean
  applicationAuth: 'developer' | 'partner' | null
  idempotent: boolean
}
const ROUTE_FACTS = 'x-print-hub-route'

interface Header {
  required?: boolean
  description?: string
  schema?: Json
  $ref?: string
}
interface Response {
  description: string
  headers?: Record<string, Header>
  content?: Record<string, { schema?: Json }>
}
export interface Operation {
  parameters?: Json[]
  security?: SecurityRequirement[]
  responses: Record<string, Response>
  [ROUTE_FACTS]?: RouteFacts
}

/** @fastify/swagger's per-route transform: notes the route's config on its schema (copied to the operation). */
export function noteRouteFacts(schema: FastifySchema | undefined, config: FastifyContextConfig) {
  const facts: RouteFacts = {
    scopes: config.scopes ? [...config.scopes] : null,
    hubAuth: config.hubAuth === true,
    applicationAuth: config.applicationAuth ?? null,
    idempotent: config.idempotent !== undefined && config.idempotent !== false,
  }
  return { schema: { ...schema, [ROUTE_FACTS]: facts } as FastifySchema }
}

/** A header object of a TypeBox schema: its description moves up beside `required`. */
const header = (schema: TSchema, required: boolean): Header => {
  const { description, ...rest } = schema as Json
  return { required, ...(typeof description === 'string' && { description }), schema: rest }
}

/** The headers and parameters every operation shares, as components (`components.headers`, `.parameters`). */
export const SHARED_COMPONENTS = {
  headers: {
    'X-Request-Id': header(RequestId, true),
    ...Object.fromEntries(
      Object.entries(RATE_LIMIT_HEADERS).map(([name, schema]) => [name, header(schema, true)]),
    ),
    'Retry-After': header(RetryAfter, true),
    'Idempotent-Replayed': header(IdempotentReplayed, false),
    'WWW-Authenticate': header(WwwAuthenticate, true),
  },
  parameters: {
    RequestId: { in: 'header', name: 'X-Request-Id', ...header(RequestId, false) },
  },
}
type SharedHeader = keyof typeof SHARED_COMPONENTS.headers

const refs = (names: SharedHeader[]) =>
  Object.fromEntries(names.map((name) => [name, { $ref: `#/components/headers/${name}` }]))
const RATE_LIMIT = Object.keys(RATE_LIMIT_HEADERS) as SharedHeader[]

const errorResponse = (description: string, headers: SharedHeader[] = []): Response => ({
  description,
  headers: refs(['X-Request-Id', ...headers]),
  content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
})

/**
 * Who may call the operation, from the route's config (never repeated in route schemas): the scopes of a
 * bearer token from POST /oauth/token, a hub credential, what the route states itself (the token endpoint's
 * optional HTTP Basic), or anyone.
 */
function securityOf(facts: RouteFacts, stated: SecurityRequirement[] | undefined): SecurityRequirement[] {
  if (facts.scopes) return [{ bearerAuth: facts.scopes }, { clientCredentials: facts.scopes }]
  if (facts.hubAuth) return [{ hubCredential: [] }]
  if (facts.applicationAuth) return [{ applicationAssertion: [] }]
  return stated ?? []
}

/**
 * Completes an operation from its route's facts: security, the X-Request-Id every endpoint takes, the
 * headers of each success response, and the error answers every endpoint may give (spec: Endpoints, Errors).
 */
export function describeOperation(op: Operation): void {
  const facts = op[ROUTE_FACTS]
  delete op[ROUTE_FACTS]
  if (!facts) return
  op.security = securityOf(facts, op.security)
  op.parameters = [...(op.parameters ?? []), { $ref: '#/components/parameters/RequestId' }]
  const responses: Record<string, Response> = {}
  for (const [status, response] of Object.entries(op.responses)) {
    if (!/^2\d\d$/.test(status)) continue
    // Headers a route declares itself are sent with every such response.
    const own = Object.fromEntries(
      Object.entries(response.headers ?? {}).map(([name, h]) => [name, { ...h, required: true }]),
    )
    const shared: SharedHeader[] = ['X-Request-Id', ...RATE_LIMIT]
    if (facts.idempotent) shared.push('Idempotent-Replayed')
    responses[status] = { ...response, headers: { ...refs(shared), ...own } }
  }
  if (op.security.length > 0) {
    responses['401'] = errorResponse(
      'Credentials are missing or invalid; `WWW-Authenticate` names the scheme.',
      ['WWW-Authenticate'],
    )
  }
  responses['4XX'] = errorResponse('The request was refused; `error_code` says why.')
  responses['429'] = errorResponse('A quota is used up; retry after `Retry-After` seconds.', [
    'Retry-After',
    ...RATE_LIMIT,
  ])
  responses['503'] = errorResponse(
    'This node cannot take the request now (shutting down, or busy); retry after `Retry-After` seconds.',
    ['Retry-After'],
  )
  responses['5XX'] = errorResponse('An unexpected error; nothing internal is revealed.')
  op.responses = responses
}
