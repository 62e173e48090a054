import type { FastifyPluginAsync } from 'fastify'
import { Agent } from '../../protocol/agent.ts'
import { ErrorBody } from '../../protocol/errors.ts'
import { ListQuery, Page } from '../../protocol/pagination.ts'
import { Printer } from '../../protocol/printer.ts'
import { jsonResponse } from '../openapi/responses.ts'
import { authOf } from '../plugins/authentication.ts'
import type { Storage } from '../storage/storage.ts'
import { unknownCursor } from './list-errors.ts'

/** GET /api/v1/agents and GET /api/v1/printers (scope printers:read): the account's hubs and printers. */
export const resourceListRoutes: FastifyPluginAsync<{ storage: Storage }> = async (app, { storage }) => {
  app.get(
    '/api/v1/agents',
    {
      config: { scopes: ['printers:read'] },
      schema: {
        operationId: 'listAgents',
        tags: ['Printers'],
        summary: "List the account's agents (hubs), newest first",
        querystring: ListQuery,
        response: {
          200: jsonResponse("A page of the account's agents, newest first.", Page(Agent, 'AgentPage')),
          '4xx': ErrorBody,
        },
      },
    },
    async (request) => {
      const { limit = 50, cursor } = request.query as { limit?: number; cursor?: string }
      return (await storage.agents.list(authOf(request).accountId, limit, cursor)) ?? unknownCursor()
    },
  )

  app.get(
    '/api/v1/printers',
    {
      config: { scopes: ['printers:read'] },
      schema: {
        operationId: 'listPrinters',
        tags: ['Printers'],
        summary: "List the account's printers with their agent, languages, capabilities and online state",
        querystring: ListQuery,
        response: {
          200: jsonResponse("A page of the account's printers, newest first.", Page(Printer, 'PrinterPage')),
          '4xx': ErrorBody,
        },
      },
    },
    async (request) => {
      const { limit = 50, cursor } = request.query as { limit?: number; cursor?: string }
      return (await storage.printers.list(authOf(request).accountId, limit, cursor)) ?? unknownCursor()
    },
  )
}
