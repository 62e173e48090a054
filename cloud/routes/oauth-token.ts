import formbody from '@fastify/formbody'
import type { FastifyPluginAsync } from 'fastify'
import { ApiError } from '../../print-api/api-error.ts'
import {
  BASIC_CHALLENGE,
  clientCredentials,
  invalidRequest,
  malformed,
} from '../../print-api/oauth-client-credentials.ts'
import { hashSecret, secretMatches } from '../../print-api/secrets.ts'
import { SCOPES, type Scope } from '../../protocol/enums.ts'
import { ErrorBody } from '../../protocol/errors.ts'
import { NoStore, PragmaNoCache } from '../../protocol/http-headers.ts'
import { TokenRequest, TokenResponse } from '../../protocol/oauth.ts'
import type { AccessTokenSigner } from '../auth/access-token-signer.ts'
import { jsonResponse } from '../openapi/responses.ts'
import type { Storage } from '../storage/storage.ts'

export interface OauthTokenOptions {
  storage: Storage
  accessTokenTtlSeconds: number
  accessTokens: AccessTokenSigner
}

/** RFC 6749 §3.3: a space-delimited list; each value must be one the client was granted. */
function grantedScopes(requested: unknown, clientScopes: readonly Scope[]): Scope[] {
  if (requested === undefined) return [...clientScopes]
  if (typeof requested !== 'string') throw invalidRequest('scope must be given once.')
  const wanted = [...new Set(requested.split(' ').filter((s) => s !== ''))]
  if (wanted.length === 0) return [...clientScopes]
  const refused = wanted.filter(
    (s) => !(SCOPES as readonly string[]).includes(s) || !clientScopes.includes(s as Scope),
  )
  if (refused.length > 0) {
    throw new ApiError('invalid_scope', `The client may not have the scope ${refused.join(', ')}.`, {
      refused_scopes: refused,
    })
  }
  return wanted as Scope[]
}

/** POST /oauth/token — OAuth 2.0 client credentials grant (RFC 6749 §4.4) for account API clients. */
export const oauthTokenRoutes: FastifyPluginAsync<OauthTokenOptions> = async (
  app,
  { storage, accessTokenTtlSeconds, accessTokens },
) => {
  // RFC 6749 §4.4.2: the token request is form-encoded; only this route parses such bodies.
  await app.register(formbody)
  app.post(
    '/oauth/token',
    {
      attachValidation: true,
      schema: {
        operationId: 'createAccessToken',
        tags: ['Authentication'],
        summary: 'Exchange client credentials for a bearer access token',
        consumes: ['application/x-www-form-urlencoded'],
        // Credentials in the form body (no scheme), or HTTP Basic.
        security: [{}, { clientBasic: [] }],
        body: TokenRequest,
        response: {
          200: jsonResponse(
            'An access token; cache it until shortly before expires_in elapses.',
            TokenResponse,
            { 'Cache-Control': NoStore, Pragma: PragmaNoCache },
          ),
          '4xx': ErrorBody,
        },
      },
    },
    async (request, reply) => {
      reply.header('cache-control', 'no-store').header('pragma', 'no-cache')
      const contentType = request.headers['content-type'] ?? ''
      if (!/^application\/x-www-form-urlencoded\b/i.test(contentType) || malformed(request)) {
        throw invalidRequest(
          'Send an application/x-www-form-urlencoded body with grant_type=client_credentials.',
        )
      }
      const body = (request.body ?? {}) as Record<string, unknown>
      const credentials = clientCredentials(request, body)
      await app.tokenFailures.check(request)
      if (credentials === null) {
        await app.tokenFailures.record(request, null)
        throw new ApiError('invalid_client', 'Client authentication is required.', undefined, BASIC_CHALLENGE)
      }
      // The secret is checked before any count of the client's failures: a client id is no secret (RFC 6749
      // §2.2), so failures sent by others with it must not refuse the right secret.
      const client = await storage.apiClients.findById(credentials.clientId)
      // Hash and compare even for an unknown client, so both failures take the same time.
      const matches = secretMatches(credentials.clientSecret, client?.secret_hash ?? hashSecret(''))
      if (!client || !matches || client.revoked_at !== null) {
        await app.tokenFailures.record(request, credentials.clientId)
        throw new ApiError('invalid_client', 'Client authentication failed.', undefined, BASIC_CHALLENGE)
      }
      if (body.grant_type === undefined) throw invalidRequest('grant_type is required.')
      if (body.grant_type !== 'client_credentials') {
        throw new ApiError('unsupported_grant_type', 'Only grant_type=client_credentials is supported.')
      }
      const scopes = grantedScopes(body.scope, client.scopes)
      // A signed JWT, so that the account's hubs can check it offline (docs/lan-printing.md); the cloud still
      // checks it by its stored digest, so a revoked client's tokens stop here at once.
      const now = Date.now()
      const accessToken = await accessTokens.sign(
        { accountId: client.account_id, clientId: client.client_id, scopes },
        accessTokenTtlSeconds,
        now,
      )
      await storage.apiClients.storeToken(hashSecret(accessToken), {
        account_id: client.account_id,
        client_id: client.client_id,
        scopes,
        expires_at: now + accessTokenTtlSeconds * 1000,
      })
      request.log.info({ client_id: client.client_id }, 'access token issued')
      return {
        access_token: accessToken,
        token_type: 'Bearer' as const,
        expires_in: accessTokenTtlSeconds,
        scope: scopes.join(' '),
      }
    },
  )
}
