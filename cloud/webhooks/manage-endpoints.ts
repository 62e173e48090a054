import { randomUUID } from 'node:crypto'
import { ApiError, isApiError } from '../../print-api/api-error.ts'
import type {
  CreateWebhookEndpointBody,
  RotateWebhookSecretBody,
  UpdateWebhookEndpointBody,
  WebhookDelivery,
  WebhookEndpoint,
  WebhookEndpointWithSecret,
} from '../../protocol/webhooks.ts'
import { WEBHOOK_LIMITS } from '../../protocol/webhooks.ts'
import { parseDocumentUrl } from '../fetch/url-policy.ts'
import type { WebhookRepository } from '../storage/webhooks.ts'
import { newWebhookSecret, type WebhookSecretBox } from './secret-box.ts'

/** How long deliveries are also signed with the old secret after a rotation, unless the caller says. */
export const DEFAULT_PREVIOUS_SECRET_HOURS = 24

/** Why a target is refused when it is saved (the `reason` of the URL policy), in words for `details.fields`. */
const URL_REFUSALS: Record<string, string> = {
  malformed_url: 'must be a well-formed absolute https:// URL',
  scheme_not_https: 'must use https',
  credentials_in_url: 'must not carry a user name or password',
  missing_host: 'must name a host',
  invalid_port: 'must not name port 0',
  local_hostname: 'names a local host; it must be on the public internet',
  unspecified_address: 'names the unspecified address; it must be public',
  loopback_address: 'names a loopback address; it must be public',
  private_address: 'names a private address; it must be public',
  link_local_address: 'names a link-local address; it must be public',
  cgnat_address: 'names a shared (CGNAT) address; it must be public',
  unique_local_address: 'names a unique local address; it must be public',
  multicast_address: 'names a multicast address; it must be public',
  broadcast_address: 'names the broadcast address; it must be public',
  ipv4_mapped_address: 'names an IPv4-mapped IPv6 address; name the IPv4 address or a host',
  ipv4_compatible_address: 'names an IPv4-compatible IPv6 address; it must be public',
  teredo_address: 'names a Teredo address; it must be public',
  reserved_address: 'names a reserved address; it must be public',
  invalid_address: 'names an invalid address',
}

/**
 * The static part of the URL policy of document fetches (cloud/fetch/url-policy.ts), applied to a webhook
 * target when it is saved: an absolute https URL without credentials whose host is not a local name nor a
 * non-public address literal. A refusal is a 422 `validation_failed` naming `field` (the DNS-resolved
 * addresses are checked again at each delivery). Answers the URL as given.
 */
export function checkWebhookUrl(url: string, field = 'url', location = 'body'): string {
  const refuse = (message: string): never => {
    throw new ApiError('validation_failed', `Invalid ${field}.`, { fields: [{ field, message, location }] })
  }
  if (url.length > WEBHOOK_LIMITS.urlMaxLength)
    refuse(`must be at most ${WEBHOOK_LIMITS.urlMaxLength} characters`)
  try {
    parseDocumentUrl(url)
  } catch (error) {
    if (!isApiError(error)) throw error
    const reason = String(error.details?.reason ?? '')
    refuse(URL_REFUSALS[reason] ?? 'is not allowed')
  }
  return url
}

export interface WebhookEndpointAdminOptions {
  webhooks: WebhookRepository
  secrets: WebhookSecretBox
  now?: () => number
  /** Told when a delivery was queued due now (a test event, a redelivery): this node's worker sends it at once. */
  queued?: () => void
}

/**
 * What the API (cloud/routes/webhook-endpoints.ts) and the console's Webhooks page do to an account's
 * endpoints, with the same checks and the same errors: an endpoint, delivery or attempt of another account is
 * not found. Signing secrets are made here, sealed to the endpoint's id and returned once (create, rotate).
 */
export function webhookEndpointAdmin({
  webhooks,
  secrets,
  now = Date.now,
  queued = () => {},
}: WebhookEndpointAdminOptions) {
  const iso = () => new Date(now()).toISOString()
  const endpointNotFound = (): never => {
    throw new ApiError('webhook_endpoint_not_found', 'No such webhook endpoint.')
  }
  const deliveryNotFound = (): never => {
    throw new ApiError('webhook_delivery_not_found', 'No such webhook delivery.')
  }
  const endpointOf = async (accountId: string, endpointId: string): Promise<WebhookEndpoint> =>
    (await webhooks.findEndpoint(accountId, endpointId)) ?? endpointNotFound()
  /** Nothing is sent to a disabled endpoint (the worker claims deliveries of enabled ones only). */
  const assertEnabled = (endpoint: WebhookEndpoint) => {
    if (endpoint.enabled) return
    throw new ApiError(
      'webhook_endpoint_disabled',
      endpoint.disabled_reason === 'failing'
        ? 'The webhook endpoint was disabled because its deliveries kept failing; enable it first.'
        : 'The webhook endpoint is paused; enable it first.',
      { disabled_reason: endpoint.disabled_reason },
    )
  }

  return {
    list: (accountId: string) => webhooks.listEndpoints(accountId),
    get: endpointOf,

    async create(accountId: string, body: CreateWebhookEndpointBody): Promise<WebhookEndpointWithSecret> {
      checkWebhookUrl(body.url)
      const endpointId = randomUUID()
      const secret = newWebhookSecret()
      const created = await webhooks.createEndpoint(
        accountId,
        {
          endpointId,
          url: body.url,
          eventTypes: body.event_types,
          description: body.description ?? null,
          sealedSecret: secrets.seal(secret, endpointId),
        },
        iso(),
      )
      if (created === 'limit') {
        throw new ApiError(
          'webhook_endpoint_limit_reached',
          `An account may have ${WEBHOOK_LIMITS.endpointsPerAccount} webhook endpoints; delete one first.`,
          { limit: WEBHOOK_LIMITS.endpointsPerAccount },
        )
      }
      return { ...created, secret }
    },

    async update(
      accountId: string,
      endpointId: string,
      body: UpdateWebhookEndpointBody,
    ): Promise<WebhookEndpoint> {
      if (body.url !== undefined) checkWebhookUrl(body.url)
      const updated = await webhooks.updateEndpoint(
        accountId,
        endpointId,
        {
          ...(body.url !== undefined && { url: body.url }),
          ...(body.event_types !== undefined && { eventTypes: body.event_types }),
          ...(body.description !== undefined && { description: body.description }),
          ...(body.enabled !== undefined && { enabled: body.enabled }),
        },
        iso(),
      )
      return updated ?? endpointNotFound()
    },

    async remove(accountId: string, endpointId: string): Promise<void> {
      if (!(await webhooks.deleteEndpoint(accountId, endpointId))) endpointNotFound()
    },

    async rotate(
      accountId: string,
      endpointId: string,
      body: RotateWebhookSecretBody,
    ): Promise<WebhookEndpointWithSecret> {
      const secret = newWebhookSecret()
      const hours = body.previous_secret_valid_hours ?? DEFAULT_PREVIOUS_SECRET_HOURS
      const rotated = await webhooks.rotateSecret(
        accountId,
        endpointId,
        secrets.seal(secret, endpointId),
        hours === 0 ? null : now() + hours * 3600_000,
        iso(),
      )
      return rotated ? { ...rotated, secret } : endpointNotFound()
    },

    async sendTest(accountId: string, endpointId: string): Promise<WebhookDelivery> {
      assertEnabled(await endpointOf(accountId, endpointId))
      const delivery = (await webhooks.enqueueTest(accountId, endpointId, now())) ?? endpointNotFound()
      queued()
      return delivery
    },

    async deliveries(accountId: string, endpointId: string, limit: number, cursor?: string) {
      const page = await webhooks.listDeliveries(accountId, endpointId, limit, cursor)
      if (page) return page
      // An unknown endpoint is a 404; a known one with a cursor that names none of its deliveries, a 422.
      await endpointOf(accountId, endpointId)
      return undefined
    },

    findDelivery: (accountId: string, deliveryId: string) => webhooks.findDelivery(accountId, deliveryId),

    async attempts(accountId: string, deliveryId: string) {
      return (await webhooks.listAttempts(accountId, deliveryId)) ?? deliveryNotFound()
    },

    async redeliver(accountId: string, deliveryId: string): Promise<WebhookDelivery> {
      const delivery = (await webhooks.findDelivery(accountId, deliveryId)) ?? deliveryNotFound()
      assertEnabled(await endpointOf(accountId, delivery.webhook_endpoint_id))
      const again = (await webhooks.redeliver(accountId, deliveryId, now())) ?? deliveryNotFound()
      queued()
      return again
    },
  }
}
export type WebhookEndpointAdmin = ReturnType<typeof webhookEndpointAdmin>
