import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyPluginAsync } from 'fastify'
import { Type } from 'typebox'
import { ApiError } from '../../print-api/api-error.ts'
import { ErrorBody } from '../../protocol/errors.ts'
import { ListQuery, Page } from '../../protocol/pagination.ts'
import {
  ACCOUNT_ACTIONS,
  CreateManagedAccountRequest,
  ExternalCustomerId,
  ManagedAccount,
  PartnerIdempotencyKey,
  ProvisionedManagedAccount,
} from '../../protocol/partner.ts'
import { jsonResponse } from '../openapi/responses.ts'
import { checkReturnUri, issueEnrollment, type OnboardingSettings } from '../partner/onboarding.ts'
import { managedAccountNotFound, PRIVATE_NO_STORE, PrivateNoStore } from '../partner/partner-common.ts'
import { applicationOf } from '../plugins/authentication.ts'
import { recordAnswerWithin } from '../plugins/idempotency.ts'
import type { Storage } from '../storage/storage.ts'
import { unknownCursor } from './list-errors.ts'

export interface PartnerApiOptions extends OnboardingSettings {
  storage: Storage
}

const RelationshipParams = Type.Object({ relationshipId: Type.String({ format: 'uuid' }) })
const TAGS = ['Partner management']
const PAST = { suspend: 'suspended', resume: 'resumed', close: 'closed' } as const

/** Spec: Partner management, accounts. Every route takes an assertion of an application with the partner capability. */
export const partnerAccountRoutes: FastifyPluginAsync<PartnerApiOptions> = async (app, options) => {
  const { storage } = options
  const api = app.withTypeProvider<TypeBoxTypeProvider>()

  api.get(
    '/partner-api/v1/accounts',
    {
      config: { applicationAuth: 'partner' },
      schema: {
        operationId: 'listManagedAccounts',
        tags: TAGS,
        summary: "List the application's managed accounts with hub and printer health, newest first",
        querystring: Type.Object(
          {
            ...ListQuery.properties,
            external_customer_id: Type.Optional(ExternalCustomerId),
          },
          { additionalProperties: false },
        ),
        response: {
          200: jsonResponse('A page of managed accounts.', Page(ManagedAccount, 'ManagedAccountPage')),
          '4xx': ErrorBody,
        },
      },
    },
    async (request) => {
      const { limit = 50, cursor, external_customer_id } = request.query
      const page = await storage.managedAccounts.list(
        applicationOf(request).app_id,
        limit,
        cursor,
        external_customer_id,
      )
      return page ?? unknownCursor()
    },
  )

  api.post(
    '/partner-api/v1/accounts',
    {
      config: { applicationAuth: 'partner', idempotent: { by: 'application', replayStatus: 200 } },
      schema: {
        operationId: 'createManagedAccount',
        tags: TAGS,
        summary: 'Provision a customer account, its App Installation and a one-time agent enrollment',
        description:
          'Idempotency-Key is required and bound to the complete request: a retry replays the first answer ' +
          'with 200 (the same relationship and onboarding URL); another request with the key is a 409, as is ' +
          'an external_customer_id this application already provisioned under another key.',
        headers: Type.Object({ 'idempotency-key': PartnerIdempotencyKey }),
        body: CreateManagedAccountRequest,
        response: {
          200: jsonResponse(
            'A replay of the first answer to this Idempotency-Key.',
            ProvisionedManagedAccount,
            {
              'Cache-Control': PrivateNoStore,
            },
          ),
          201: jsonResponse(
            'Provisioned; onboarding_url and agent_enrollment.enrollment_token are shown here only.',
            ProvisionedManagedAccount,
            { 'Cache-Control': PrivateNoStore },
          ),
          '4xx': ErrorBody,
        },
      },
    },
    async (request, reply) => {
      reply.header('cache-control', PRIVATE_NO_STORE)
      const application = applicationOf(request)
      const body = request.body
      checkReturnUri(body.agent_onboarding.return_uri)
      const conflict = async () => {
        const existing = await storage.managedAccounts.findByExternalId(
          application.app_id,
          body.external_customer_id,
        )
        if (!existing) return undefined
        return new ApiError(
          'relationship_conflict',
          'This application already provisioned an account for that external_customer_id.',
          { relationship_id: existing.relationship_id },
        )
      }
      const known = await conflict()
      if (known) throw known
      let provisioned: Awaited<ReturnType<typeof provision>>
      const provision = () =>
        storage.atomically(async (tx) => {
          const account = await tx.accounts.create(body.name)
          const installation = await tx.applications.install(
            application.app_id,
            account.account_id,
            body.permissions,
          )
          const relationship = await tx.managedAccounts.create({
            appId: application.app_id,
            accountId: account.account_id,
            installationId: installation.installation_id,
            externalCustomerId: body.external_customer_id,
          })
          const enrollment = await issueEnrollment(
            tx,
            { account_id: account.account_id, relationship_id: relationship.relationship_id },
            body,
            options,
          )
          const answer = {
            ...relationship,
            agent_enrollment: enrollment,
            onboarding_url: enrollment.onboarding_url,
          }
          await recordAnswerWithin(tx, request, 201, answer)
          return answer
        })
      try {
        provisioned = await provision()
      } catch (error) {
        // Two requests for one customer under different keys at once: the second loses on the unique index.
        throw (await conflict()) ?? error
      }
      request.log.info(
        { app_id: application.app_id, relationship_id: provisioned.relationship_id },
        'managed account provisioned',
      )
      return reply.code(201).send(provisioned)
    },
  )

  api.get(
    '/partner-api/v1/accounts/:relationshipId',
    {
      config: { applicationAuth: 'partner' },
      schema: {
        operationId: 'getManagedAccount',
        tags: TAGS,
        summary: 'Get a managed account with its state and health',
        params: RelationshipParams,
        response: { 200: jsonResponse('The managed account.', ManagedAccount), '4xx': ErrorBody },
      },
    },
    async (request) =>
      (await storage.managedAccounts.find(applicationOf(request).app_id, request.params.relationshipId)) ??
      managedAccountNotFound(),
  )

  api.post(
    '/partner-api/v1/accounts/:relationshipId/:action',
    {
      config: { applicationAuth: 'partner' },
      schema: {
        operationId: 'changeManagedAccountState',
        tags: TAGS,
        summary: 'Suspend, resume or close a managed account',
        description:
          'suspend: any account not closed becomes suspended (its tokens, installation and jobs stop; its hubs ' +
          'stay connected). resume: a suspended account becomes active. close: terminal; every credential and ' +
          'enrollment is revoked and its hubs are disconnected; closing a closed account changes nothing. Any ' +
          'other action from the current state is a 422 account_action_not_allowed.',
        params: Type.Object({
          relationshipId: Type.String({ format: 'uuid' }),
          action: Type.Enum(ACCOUNT_ACTIONS, { title: 'ManagedAccountAction' }),
        }),
        response: { 200: jsonResponse('The updated managed account.', ManagedAccount), '4xx': ErrorBody },
      },
    },
    async (request) => {
      const application = applicationOf(request)
      const { relationshipId, action } = request.params
      const outcome = await storage.managedAccounts.transition(
        application.app_id,
        relationshipId,
        action,
        new Date(),
      )
      if (outcome.outcome === 'not_found') return managedAccountNotFound()
      if (outcome.outcome === 'not_allowed') {
        throw new ApiError(
          'account_action_not_allowed',
          `${/^[aeiou]/.test(outcome.state) ? 'An' : 'A'} ${outcome.state} account cannot be ${PAST[action]}.`,
          { state: outcome.state, action },
        )
      }
      request.log.info(
        { app_id: application.app_id, relationship_id: relationshipId, action },
        'managed account changed',
      )
      return outcome.account
    },
  )
}
