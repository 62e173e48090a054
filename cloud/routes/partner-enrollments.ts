import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyPluginAsync } from 'fastify'
import { Type } from 'typebox'
import { ApiError } from '../../print-api/api-error.ts'
import { ErrorBody } from '../../protocol/errors.ts'
import { ListQuery, Page } from '../../protocol/pagination.ts'
import {
  AgentEnrollment,
  CreateAgentEnrollmentRequest,
  IssuedAgentEnrollment,
  PartnerIdempotencyKey,
} from '../../protocol/partner.ts'
import { jsonResponse } from '../openapi/responses.ts'
import { agentEnrollmentView, checkReturnUri, issueEnrollment } from '../partner/onboarding.ts'
import { managedAccountNotFound, PRIVATE_NO_STORE, PrivateNoStore } from '../partner/partner-common.ts'
import { applicationOf } from '../plugins/authentication.ts'
import { recordAnswerWithin } from '../plugins/idempotency.ts'
import { unknownCursor } from './list-errors.ts'
import type { PartnerApiOptions } from './partner-accounts.ts'

const TAGS = ['Partner management']
const AccountParams = Type.Object({ relationshipId: Type.String({ format: 'uuid' }) })

const enrollmentNotFound = (): never => {
  throw new ApiError(
    'agent_enrollment_not_found',
    'This managed account has no agent enrollment with that id.',
  )
}

/** Spec: Partner management, agent enrollments of a managed account. */
export const partnerEnrollmentRoutes: FastifyPluginAsync<PartnerApiOptions> = async (app, options) => {
  const { storage } = options
  const api = app.withTypeProvider<TypeBoxTypeProvider>()
  const owned = async (appId: string, relationshipId: string) =>
    (await storage.managedAccounts.find(appId, relationshipId)) ?? managedAccountNotFound()

  api.get(
    '/partner-api/v1/accounts/:relationshipId/agent-enrollments',
    {
      config: { applicationAuth: 'partner' },
      schema: {
        operationId: 'listAgentEnrollments',
        tags: TAGS,
        summary:
          "List a managed account's agent enrollments (pending, claimed, expired, revoked), newest first",
        params: AccountParams,
        querystring: ListQuery,
        response: {
          200: jsonResponse(
            'A page of agent enrollments, never their secrets.',
            Page(AgentEnrollment, 'AgentEnrollmentPage'),
          ),
          '4xx': ErrorBody,
        },
      },
    },
    async (request) => {
      const account = await owned(applicationOf(request).app_id, request.params.relationshipId)
      const { limit = 50, cursor } = request.query as { limit?: number; cursor?: string }
      const page = (await storage.enrollments.list(account.account_id, limit, cursor)) ?? unknownCursor()
      return {
        data: page.data.map((enrollment) => agentEnrollmentView(enrollment, account.relationship_id)),
        next_cursor: page.next_cursor,
      }
    },
  )

  api.post(
    '/partner-api/v1/accounts/:relationshipId/agent-enrollments',
    {
      config: { applicationAuth: 'partner', idempotent: { by: 'application' } },
      schema: {
        operationId: 'createAgentEnrollment',
        tags: TAGS,
        summary: 'Issue a one-time agent enrollment with its hosted onboarding URL',
        description:
          'Idempotency-Key is required: an identical retry replays the first answer, secrets included; another ' +
          'request with the key is a 409. replaces_enrollment_id revokes that enrollment of the account if it is ' +
          'still pending (404 if the account has none of that id). Only an active account takes enrollments.',
        headers: Type.Object({ 'idempotency-key': PartnerIdempotencyKey }),
        params: AccountParams,
        body: CreateAgentEnrollmentRequest,
        response: {
          201: jsonResponse(
            'Issued; enrollment_token and onboarding_url are shown here (and in replays) only.',
            IssuedAgentEnrollment,
            { 'Cache-Control': PrivateNoStore },
          ),
          '4xx': ErrorBody,
        },
      },
    },
    async (request, reply) => {
      reply.header('cache-control', PRIVATE_NO_STORE)
      const account = await owned(applicationOf(request).app_id, request.params.relationshipId)
      const body = request.body
      checkReturnUri(body.agent_onboarding.return_uri)
      const replaced = body.replaces_enrollment_id
      if (replaced !== undefined) {
        const previous = await storage.enrollments.findById(replaced)
        if (!previous || previous.account_id !== account.account_id) enrollmentNotFound()
      }
      if (account.state !== 'active') {
        throw new ApiError(
          'account_action_not_allowed',
          `A ${account.state} account takes no new enrollments.`,
          {
            state: account.state,
            action: 'create_agent_enrollment',
          },
        )
      }
      const issued = await storage.atomically(async (tx) => {
        if (replaced !== undefined) await tx.enrollments.revoke(replaced, new Date())
        const enrollment = await issueEnrollment(tx, account, body, options)
        await recordAnswerWithin(tx, request, 201, enrollment)
        return enrollment
      })
      request.log.info(
        { relationship_id: account.relationship_id, enrollment_id: issued.enrollment_id },
        'agent enrollment issued',
      )
      return reply.code(201).send(issued)
    },
  )

  api.get(
    '/partner-api/v1/accounts/:relationshipId/agent-enrollments/:enrollmentId',
    {
      config: { applicationAuth: 'partner' },
      schema: {
        operationId: 'getAgentEnrollment',
        tags: TAGS,
        summary: 'Get an agent enrollment (never its secrets)',
        params: Type.Object({
          relationshipId: Type.String({ format: 'uuid' }),
          enrollmentId: Type.String({ format: 'uuid' }),
        }),
        response: { 200: jsonResponse('The agent enrollment.', AgentEnrollment), '4xx': ErrorBody },
      },
    },
    async (request) => {
      const account = await owned(applicationOf(request).app_id, request.params.relationshipId)
      const enrollment = await storage.enrollments.findById(request.params.enrollmentId)
      if (!enrollment || enrollment.account_id !== account.account_id) return enrollmentNotFound()
      return agentEnrollmentView(enrollment, account.relationship_id)
    },
  )
}
