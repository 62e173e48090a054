import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyPluginAsync } from 'fastify'
import { Type } from 'typebox'
import { ApiError } from '../../print-api/api-error.ts'
import { Agent } from '../../protocol/agent.ts'
import { ErrorBody } from '../../protocol/errors.ts'
import { UpdateManagedAgentRequest } from '../../protocol/partner.ts'
import { jsonResponse } from '../openapi/responses.ts'
import { managedAccountNotFound } from '../partner/partner-common.ts'
import { applicationOf } from '../plugins/authentication.ts'
import type { PartnerApiOptions } from './partner-accounts.ts'

const AgentParams = Type.Object({
  relationshipId: Type.String({ format: 'uuid' }),
  agentId: Type.String({ format: 'uuid' }),
})

/** Spec: Partner management, the hubs of a managed account. */
export const partnerAgentRoutes: FastifyPluginAsync<PartnerApiOptions> = async (app, { storage }) => {
  const api = app.withTypeProvider<TypeBoxTypeProvider>()

  api.patch(
    '/partner-api/v1/accounts/:relationshipId/agents/:agentId',
    {
      config: { applicationAuth: 'partner' },
      schema: {
        operationId: 'updateManagedAgent',
        tags: ['Partner management'],
        summary: "Turn a managed account's hub's LAN API on or off",
        description:
          'Sets whether the hub serves the print API on its LAN while the cloud is out of reach (off unless ' +
          'enabled); the hub is told within seconds while it is online. Setting a value twice changes nothing, so ' +
          'no Idempotency-Key is needed. A hub not of this account (or revoked) is a 404 `agent_not_found`.',
        params: AgentParams,
        body: UpdateManagedAgentRequest,
        response: {
          200: jsonResponse('The hub as `GET /api/v1/agents` shows it.', Agent),
          '4xx': ErrorBody,
        },
      },
    },
    async (request) => {
      const application = applicationOf(request)
      const { relationshipId, agentId } = request.params
      const account =
        (await storage.managedAccounts.find(application.app_id, relationshipId)) ?? managedAccountNotFound()
      // Every cloud node tells the hub `refresh_lan` within a second (presence/lan-refresh.ts).
      const enabled = request.body.lan_api_enabled
      const agent = await storage.agents.setLanApi(
        account.account_id,
        agentId,
        enabled,
        new Date().toISOString(),
      )
      if (!agent) throw new ApiError('agent_not_found', 'This managed account has no hub with that id.')
      request.log.info(
        {
          app_id: application.app_id,
          relationship_id: relationshipId,
          agent_id: agentId,
          lan_api_enabled: enabled,
        },
        'managed hub changed',
      )
      return agent
    },
  )
}
