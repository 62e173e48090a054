import type { FastifyPluginAsync } from 'fastify'
import { ErrorBody } from '../../protocol/errors.ts'
import { NoStore } from '../../protocol/http-headers.ts'
import { LanCredentialsDocument } from '../../protocol/lan-credentials.ts'
import type { AccessTokenSigner } from '../auth/access-token-signer.ts'
import { jsonResponse } from '../openapi/responses.ts'
import { hubOf } from '../plugins/authentication.ts'
import type { Storage } from '../storage/storage.ts'

export interface AgentLanCredentialsOptions {
  storage: Storage
  accessTokens: AccessTokenSigner
  accessTokenTtlSeconds: number
}

/**
 * GET /agent-api/v1/lan-credentials: what a hub needs to serve the print API on its LAN while it cannot reach
 * the cloud: whether it may (off unless enabled for the hub), its printers, the token keys, and, only while it
 * may, each live API client of the hub's account with the SHA-256 digest of its secret. A secret is 256 random bits (auth/secrets.ts),
 * so its digest cannot be reversed to the secret: the digest lets the hub check a secret it is shown, never
 * present one. Installations of developer applications are not listed: only the account's own clients print
 * on the LAN.
 */
export const agentLanCredentialRoutes: FastifyPluginAsync<AgentLanCredentialsOptions> = async (
  app,
  { storage, accessTokens, accessTokenTtlSeconds },
) => {
  app.get(
    '/agent-api/v1/lan-credentials',
    {
      config: { hubAuth: true },
      schema: {
        operationId: 'getAgentLanCredentials',
        tags: ['Agents'],
        summary: "What a hub checks its account's API credentials with while the cloud is out of reach",
        response: {
          200: jsonResponse(
            "The token keys and the account's live API clients, with their secrets' digests.",
            LanCredentialsDocument,
            { 'Cache-Control': NoStore },
          ),
          '4xx': ErrorBody,
        },
      },
    },
    async (request, reply) => {
      reply.header('cache-control', 'no-store')
      const hub = hubOf(request)
      const enabled = (await storage.agents.lanApiOf(hub.agent_id))?.enabled ?? false
      const clients = enabled ? await storage.apiClients.listLiveWithSecrets(hub.account_id) : []
      return {
        lan_api_enabled: enabled,
        printers: await storage.printers.listOfAgent(hub.agent_id),
        issuer: accessTokens.issuer,
        token_keys: accessTokens.keySet,
        clients: clients.map((client) => ({
          client_id: client.client_id,
          scopes: client.scopes,
          secret_sha256: Buffer.from(client.secret_hash).toString('hex'),
        })),
        access_token_ttl_seconds: accessTokenTtlSeconds,
        generated_at: new Date().toISOString(),
      }
    },
  )
}
