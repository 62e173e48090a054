import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyPluginAsync } from 'fastify'
import { Type } from 'typebox'
import { ErrorBody } from '../../protocol/errors.ts'
import { ListQuery, Page } from '../../protocol/pagination.ts'
import {
  CreateWebhookEndpointBody,
  RotateWebhookSecretBody,
  UpdateWebhookEndpointBody,
  WebhookAttemptList,
  WebhookDelivery,
  WebhookDeliveryIdParams,
  WebhookEndpoint,
  WebhookEndpointIdParams,
  WebhookEndpointList,
  WebhookEndpointWithSecret,
} from '../../protocol/webhooks.ts'
import { jsonResponse } from '../openapi/responses.ts'
import { authOf } from '../plugins/authentication.ts'
import type { WebhookEndpointAdmin } from '../webhooks/manage-endpoints.ts'
import { unknownCursor } from './list-errors.ts'

export interface WebhookEndpointRoutesOptions {
  admin: WebhookEndpointAdmin
}

const TAG = 'Webhooks'
const IdempotencyHeaders = Type.Object({
  'idempotency-key': Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 128,
      description:
        'Retries with the same key return the original answer, secret included, for 24 hours; the answer is ' +
        'kept sealed under the key, which is stored only as a digest.',
    }),
  ),
})
const NO_STORE = { 'cache-control': 'private, no-store' }
const SECRET_NOTE =
  'The answer is the only one that shows the signing secret (`Cache-Control: private, no-store`): keep it ' +
  'where your receiver can read it. Every other answer leaves it out.'

/**
 * The webhook endpoints of an account (docs/webhooks.md, "Managing endpoints"), all with scope
 * `webhooks:write`: create (its secret shown once), list, get, change, delete, rotate the secret, send a test
 * event, and the deliveries of an endpoint with their attempts, each of which can be sent again. Another
 * account's endpoint or delivery is a 404, as an unknown one.
 */
export const webhookEndpointRoutes: FastifyPluginAsync<WebhookEndpointRoutesOptions> = async (
  app,
  { admin },
) => {
  const api = app.withTypeProvider<TypeBoxTypeProvider>()
  const config = { scopes: ['webhooks:write' as const] }
  const sealedIdempotent = { ...config, idempotent: { by: 'account' as const } }

  api.post(
    '/api/v1/webhook-endpoints',
    {
      config: sealedIdempotent,
      schema: {
        operationId: 'createWebhookEndpoint',
        tags: [TAG],
        summary: 'Create a webhook endpoint (its signing secret is shown once)',
        description:
          `${SECRET_NOTE} The URL must be \`https\` and must not name a local host or a loopback, private, ` +
          'link-local or otherwise non-public address (422 naming `url`); its resolved addresses are checked ' +
          'again at each delivery. An account has at most 20 endpoints (409 `webhook_endpoint_limit_reached`).',
        headers: IdempotencyHeaders,
        body: CreateWebhookEndpointBody,
        response: {
          201: jsonResponse('The endpoint, enabled, with its signing secret.', WebhookEndpointWithSecret),
          '4xx': ErrorBody,
        },
      },
    },
    async (request, reply) => {
      const created = await admin.create(authOf(request).accountId, request.body)
      request.log.info({ webhook_endpoint_id: created.webhook_endpoint_id }, 'webhook endpoint created')
      return reply.code(201).headers(NO_STORE).send(created)
    },
  )

  api.get(
    '/api/v1/webhook-endpoints',
    {
      config,
      schema: {
        operationId: 'listWebhookEndpoints',
        tags: [TAG],
        summary: "List the account's webhook endpoints, oldest first (one page: at most 20)",
        response: {
          200: jsonResponse('Every endpoint of the account.', WebhookEndpointList),
          '4xx': ErrorBody,
        },
      },
    },
    async (request) => ({ data: await admin.list(authOf(request).accountId), next_cursor: null }),
  )

  api.get(
    '/api/v1/webhook-endpoints/:webhookEndpointId',
    {
      config,
      schema: {
        operationId: 'getWebhookEndpoint',
        tags: [TAG],
        summary: 'Get a webhook endpoint (never its secret), with why it is disabled if it is',
        params: WebhookEndpointIdParams,
        response: { 200: jsonResponse('The endpoint.', WebhookEndpoint), '4xx': ErrorBody },
      },
    },
    async (request) => admin.get(authOf(request).accountId, request.params.webhookEndpointId),
  )

  api.patch(
    '/api/v1/webhook-endpoints/:webhookEndpointId',
    {
      config,
      schema: {
        operationId: 'updateWebhookEndpoint',
        tags: [TAG],
        summary: 'Change the URL, event types or description; pause or enable it',
        description:
          'Fields left out stay as they are. `enabled: false` pauses deliveries (`disabled_reason` ' +
          '`paused`); `enabled: true` enables a paused endpoint or one disabled for `failing`, and clears ' +
          '`failing_since`. A new URL passes the same checks as on create.',
        params: WebhookEndpointIdParams,
        body: UpdateWebhookEndpointBody,
        response: { 200: jsonResponse('The endpoint as changed.', WebhookEndpoint), '4xx': ErrorBody },
      },
    },
    async (request) => {
      const { accountId } = authOf(request)
      return admin.update(accountId, request.params.webhookEndpointId, request.body)
    },
  )

  api.delete(
    '/api/v1/webhook-endpoints/:webhookEndpointId',
    {
      config,
      schema: {
        operationId: 'deleteWebhookEndpoint',
        tags: [TAG],
        summary: 'Delete a webhook endpoint with its deliveries and their attempts',
        params: WebhookEndpointIdParams,
        response: {
          204: Type.Null({ description: 'Deleted: nothing more is sent to it.' }),
          '4xx': ErrorBody,
        },
      },
    },
    async (request, reply) => {
      await admin.remove(authOf(request).accountId, request.params.webhookEndpointId)
      request.log.info({ webhook_endpoint_id: request.params.webhookEndpointId }, 'webhook endpoint deleted')
      return reply.code(204).send(null)
    },
  )

  api.post(
    '/api/v1/webhook-endpoints/:webhookEndpointId/rotate-secret',
    {
      config: sealedIdempotent,
      schema: {
        operationId: 'rotateWebhookSecret',
        tags: [TAG],
        summary: 'Replace the signing secret (the new one is shown once)',
        description:
          `${SECRET_NOTE} Deliveries are also signed with the old secret for ` +
          '`previous_secret_valid_hours` (default 24), so a receiver can switch without missing one. The body ' +
          'may be left out.',
        headers: IdempotencyHeaders,
        params: WebhookEndpointIdParams,
        body: RotateWebhookSecretBody,
        response: {
          200: jsonResponse('The endpoint with its new signing secret.', WebhookEndpointWithSecret),
          '4xx': ErrorBody,
        },
      },
      // No body at all is the same as `{}` (Fastify validates a missing body as undefined).
      preValidation: async (request) => {
        request.body ??= {}
      },
    },
    async (request, reply) => {
      const { accountId } = authOf(request)
      const rotated = await admin.rotate(accountId, request.params.webhookEndpointId, request.body ?? {})
      request.log.info({ webhook_endpoint_id: rotated.webhook_endpoint_id }, 'webhook secret rotated')
      return reply.code(200).headers(NO_STORE).send(rotated)
    },
  )

  api.post(
    '/api/v1/webhook-endpoints/:webhookEndpointId/test',
    {
      config,
      schema: {
        operationId: 'sendWebhookTestEvent',
        tags: [TAG],
        summary: 'Send a `webhook.test` event to this endpoint',
        description:
          'Queues one delivery of a `webhook.test` event (data `{}`) to this endpoint only, due at once; follow ' +
          'it with the deliveries list and its attempts. A disabled endpoint is a 409 `webhook_endpoint_disabled`.',
        params: WebhookEndpointIdParams,
        response: { 202: jsonResponse('The delivery, `pending`.', WebhookDelivery), '4xx': ErrorBody },
      },
    },
    async (request, reply) => {
      const delivery = await admin.sendTest(authOf(request).accountId, request.params.webhookEndpointId)
      return reply.code(202).send(delivery)
    },
  )

  api.get(
    '/api/v1/webhook-endpoints/:webhookEndpointId/deliveries',
    {
      config,
      schema: {
        operationId: 'listWebhookDeliveries',
        tags: [TAG],
        summary: "List an endpoint's deliveries, newest first",
        params: WebhookEndpointIdParams,
        querystring: ListQuery,
        response: {
          200: jsonResponse(
            "A page of the endpoint's deliveries, newest first.",
            Page(WebhookDelivery, 'WebhookDeliveryPage'),
          ),
          '4xx': ErrorBody,
        },
      },
    },
    async (request) => {
      const { limit = 50, cursor } = request.query
      const { accountId } = authOf(request)
      return (
        (await admin.deliveries(accountId, request.params.webhookEndpointId, limit, cursor)) ??
        unknownCursor()
      )
    },
  )

  api.get(
    '/api/v1/webhook-deliveries/:webhookDeliveryId/attempts',
    {
      config,
      schema: {
        operationId: 'listWebhookAttempts',
        tags: [TAG],
        summary: 'List the attempts of a delivery: status, duration and error of each',
        params: WebhookDeliveryIdParams,
        response: { 200: jsonResponse('Every attempt, first first.', WebhookAttemptList), '4xx': ErrorBody },
      },
    },
    async (request) => ({
      data: await admin.attempts(authOf(request).accountId, request.params.webhookDeliveryId),
    }),
  )

  api.post(
    '/api/v1/webhook-deliveries/:webhookDeliveryId/redeliver',
    {
      config,
      schema: {
        operationId: 'redeliverWebhook',
        tags: [TAG],
        summary: 'Send a delivery again, whatever its state',
        description:
          'The same event (same `webhook-id`, same body), due at once; its attempts go on counting. A ' +
          'disabled endpoint is a 409 `webhook_endpoint_disabled`.',
        params: WebhookDeliveryIdParams,
        response: { 202: jsonResponse('The delivery, `pending` again.', WebhookDelivery), '4xx': ErrorBody },
      },
    },
    async (request, reply) => {
      const delivery = await admin.redeliver(authOf(request).accountId, request.params.webhookDeliveryId)
      return reply.code(202).send(delivery)
    },
  )
}
