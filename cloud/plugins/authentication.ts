import type { FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { decodeProtectedHeader } from 'jose'
import { ApiError } from '../../print-api/api-error.ts'
import { BEARER, REALM, requireScopes, unauthorized } from '../../print-api/bearer-auth.ts'
import { hashSecret } from '../../print-api/secrets.ts'
import type { Scope } from '../../protocol/enums.ts'
import { AssertionRefused, verifyAssertion } from '../developer/assertions.ts'
import type { AgentIdentity } from '../storage/agents.ts'
import type { Application } from '../storage/applications.ts'
import type { Storage } from '../storage/storage.ts'

/** Who called an /api/v1 route: an account API client's token, or an app installation's token. */
export interface AuthContext {
  accountId: string
  /** The API client whose token it is; null for an installation token. */
  clientId: string | null
  /** The app installation whose token it is; null for an API client's token. */
  installationId: string | null
  scopes: Scope[]
}

declare module 'fastify' {
  interface FastifyRequest {
    auth: AuthContext | null
    hub: AgentIdentity | null
    /** The developer application whose assertion authenticated the request (developer and partner APIs). */
    application: Application | null
  }
  interface FastifyContextConfig {
    /** Bearer scopes the route needs (all of them); a route without it takes no bearer token. */
    scopes?: Scope[]
    /** The route is for hubs: the bearer is a hub credential (agent API). */
    hubAuth?: boolean
    /**
     * The bearer is an application assertion (spec: Authentication, model 2): `developer` for the token
     * endpoint, `partner` for the partner API, which also needs the partner capability.
     */
    applicationAuth?: 'developer' | 'partner'
  }
}

/** Installation tokens carry this prefix, so that a lookup asks the one table that can hold the token. */
export const INSTALLATION_TOKEN_PREFIX = 'ins'
/** Three base64url parts: what an application assertion (a JWS) looks like. */
const JWS = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*\.[A-Za-z0-9_-]*$/

/** RFC 9068 §2.1: the cloud's own access tokens are JWTs too, typed at+jwt; an application assertion is not. */
function isAccessTokenJwt(token: string): boolean {
  try {
    return decodeProtectedHeader(token).typ === 'at+jwt'
  } catch {
    return false
  }
}

export async function authenticate(
  storage: Storage,
  request: FastifyRequest,
  now = Date.now(),
): Promise<AuthContext> {
  const header = request.headers.authorization
  if (header === undefined || header.trim() === '') throw unauthorized(null)
  const match = BEARER.exec(header)
  if (!match?.[1]) throw unauthorized('malformed')
  const secret = match[1]
  if (secret.startsWith(`${INSTALLATION_TOKEN_PREFIX}_`)) {
    const token = await storage.applications.findToken(hashSecret(secret), now)
    if (!token) throw unauthorized('unknown, expired, or its installation is inactive')
    return {
      accountId: token.account_id,
      clientId: null,
      installationId: token.installation_id,
      scopes: token.scopes,
    }
  }
  const token = await storage.apiClients.findToken(hashSecret(secret), now)
  if (!token) {
    // Spec (Authentication): assertions are credentials for the developer and partner APIs only.
    if (JWS.test(secret) && !isAccessTokenJwt(secret)) {
      throw unauthorized(
        'an application assertion, which /api/v1 does not take (use an installation access token)',
      )
    }
    throw unauthorized('unknown or expired')
  }
  return {
    accountId: token.account_id,
    clientId: token.client_id,
    installationId: null,
    scopes: token.scopes,
  }
}

/** Developer and partner APIs: `Authorization: Bearer <application assertion>`, each accepted once. */
export async function authenticateApplication(
  storage: Storage,
  request: FastifyRequest,
  audience: string,
): Promise<Application> {
  const header = request.headers.authorization
  if (header === undefined || header.trim() === '') throw unauthorized(null, 'assertion_invalid')
  const match = BEARER.exec(header)
  if (!match?.[1])
    throw unauthorized('the Authorization header is not Bearer <assertion>', 'assertion_invalid')
  try {
    return await verifyAssertion(match[1], { storage, audience })
  } catch (error) {
    if (!(error instanceof AssertionRefused)) throw error
    throw unauthorized(error.message, error.replayed ? 'assertion_replayed' : 'assertion_invalid')
  }
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

/** Authenticates every route that declares `config.scopes`, before its body is read. */
export const authenticationPlugin = fp<{ storage: Storage; publicUrl: string }>(
  async (app, { storage, publicUrl }) => {
    app.decorateRequest('auth', null)
    app.decorateRequest('hub', null)
    app.decorateRequest('application', null)
    app.addHook('onRequest', async (request: FastifyRequest, reply: FastifyReply) => {
      const applicationAuth = request.routeOptions.config.applicationAuth
      if (applicationAuth) {
        const application = await authenticateApplication(storage, request, publicUrl)
        if (applicationAuth === 'partner' && !application.partner) {
          throw new ApiError(
            'partner_capability_required',
            'This application has not been granted the partner capability.',
          )
        }
        request.application = application
        return
      }
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

/** The application of a developer or partner API route. */
export function applicationOf(request: FastifyRequest): Application {
  if (!request.application) throw new Error('route has no applicationAuth configured')
  return request.application
}

/** The authenticated caller of a route that declared scopes. */
export function authOf(request: FastifyRequest): AuthContext {
  if (!request.auth) throw new Error('route has no scopes configured')
  return request.auth
}
