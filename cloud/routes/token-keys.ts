import type { FastifyPluginAsync } from 'fastify'
import { Type } from 'typebox'
import { ErrorBody } from '../../protocol/errors.ts'
import { TokenKeySet } from '../../protocol/lan-credentials.ts'
import type { AccessTokenSigner } from '../auth/access-token-signer.ts'
import { jsonResponse } from '../openapi/responses.ts'

/** The key set changes only when the operator replaces the key, so any cache may keep it five minutes. */
const CACHE_CONTROL = 'public, max-age=300'

/** GET /.well-known/jwks.json — RFC 7517 §5: the public keys that check the cloud's access tokens (RFC 9068). */
export const tokenKeyRoutes: FastifyPluginAsync<{ accessTokens: AccessTokenSigner }> = async (
  app,
  { accessTokens },
) => {
  app.get(
    '/.well-known/jwks.json',
    {
      schema: {
        operationId: 'getTokenKeys',
        tags: ['Authentication'],
        summary: 'The public keys (JWKS) that verify access tokens from POST /oauth/token',
        response: {
          200: jsonResponse(
            'Ed25519 public keys (RFC 8037); an access token names its key with `kid`.',
            TokenKeySet,
            {
              'Cache-Control': Type.Enum([CACHE_CONTROL], {
                description: 'Shared caches may keep it 5 minutes.',
              }),
            },
          ),
          '4xx': ErrorBody,
        },
      },
    },
    async (_request, reply) => {
      reply.header('cache-control', CACHE_CONTROL)
      return accessTokens.keySet
    },
  )
}
