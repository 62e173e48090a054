import type { FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import type { Scope } from '../../protocol/enums.ts'
import { hashSecret } from '../auth/secrets.ts'
import { ApiError } from '../errors.ts'
import type { AgentIdentity } from '../storage/agents.ts'
import type { Storage } from '../storage/storage.ts'

export interface AuthContext {
  accountId: string
  clientId: string
  scopes: Scope[]
}

declare module 'fastify' {
  interface FastifyRequest {
    auth: AuthContext | null
    hub: AgentIdentity | null
  }
  interface FastifyContextConfig {
    /** Bearer scopes the route needs (all of them); a route without it takes no bearer token. */
    scopes?: Scope[]
    /** The route is for hubs: the bearer is a hub credential (agent API). */
    hubAuth?: boolean
  }
}

const REALM = 'realm="print-hub"'

/** RFC 6750 §3: a request without credentials gets the challenge alone; a bad token gets error="invalid_token". */
function unauthorized(description: string | null): ApiError {
  const challenge =
    description === null
      ? `Bearer ${REALM}`
      : `Bearer ${REALM}, error="invalid_token", error_description="${description}"`
  return new ApiError(
    'invalid_token',
    description === null ? 'A bearer access token is required.' : `The access token is ${description}.`,
    undefined,
    { 'www-authenticate': challenge },
  )
}

/** RFC 6750 §1.1 b64token. */
const BEARER = /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i

export async function authenticate(
  storage: Storage,
  request: FastifyRequest,
  now = Date.now(),
): Promise<AuthContext> {
  const header = request.headers.authorization
  if (header === undefined || header.trim() === '') throw unauthorized(null)
  const match = BEARER.exec(header)
  if (!match?.[1]) throw unauthorized('malformed')
  const token = await storage.apiClients.findToken(hashSecret(match[1]), now)
  if (!token) throw unauthorized('unknown or expired')
  return { accountId: token.account_id, clientId: token.client_id, scopes: token.scopes }
}

/** Agent API: `Authorization: Bearer <hub credential>`, looked up by its SHA-256. */
export async function authenticateHub(storage: Storage, request: FastifyRequest): Promise<AgentIdentity> {
  const match = BEARER.exec(request.headers.authorization ?? '')
  const agent = match?.[1] ? await storage.agents.findByCredential(hashSecret(match[1])) : undefined
  if (!agent) {
    throw new ApiError('hub_credential_invalid', 'A valid hub credential is required.', undefined, {
      'www-authenticate': `Bearer ${REALM}`,
    })
  }
  return agent
}

export function requireScopes(auth: AuthContext, required: readonly Scope[]): void {
  const missing = required.filter((scope) => !auth.scopes.includes(scope))
  if (missing.length === 0) return
  throw new ApiError(
    'insufficient_scope',
    `The access token lacks the scope ${missing.join(' and ')}.`,
    { required_scopes: required, missing_scopes: missing },
    { 'www-authenticate': `Bearer ${REALM}, error="insufficient_scope", scope="${required.join(' ')}"` },
  )
}

/** Authenticates every route that declares `config.scopes`, before its body is read. */
export const authenticationPlugin = fp<{ storage: Storage }>(
  async (app, { storage }) => {
    app.decorateRequest('auth', null)
    app.decorateRequest('hub', null)
    app.addHook('onRequest', async (request: FastifyRequest, reply: FastifyReply) => {
      if (request.routeOptions.config.hubAuth) {
        try {
          request.hub = await authenticateHub(storage, request)
        } catch (error) {
          // Hub routes are exempt from the address quota only for hubs (rate-limit.ts).
          await app.addressQuota(request, reply)
          throw error
        }
        return
      }
      const required = request.routeOptions.config.scopes
      if (required === undefined) return
      const auth = await authenticate(storage, request)
      requireScopes(auth, required)
      request.auth = auth
    })
  },
  { name: 'authentication', dependencies: ['request-id', 'rate-limit'] },
)

/** The authenticated hub of an agent API route. */
export function hubOf(request: FastifyRequest): AgentIdentity {
  if (!request.hub) throw new Error('route is not a hub route')
  return request.hub
}

/** The authenticated caller of a route that declared scopes. */
export function authOf(request: FastifyRequest): AuthContext {
  if (!request.auth) throw new Error('route has no scopes configured')
  return request.auth
}
