import { TEST_EVENT_TYPE, WEBHOOK_EVENT_BODIES, WEBHOOK_EVENT_TYPES } from '../../protocol/webhooks.ts'

type Json = Record<string, unknown>

/** The Standard Webhooks headers of every delivery (cloud/webhooks/signing.ts). */
const SIGNATURE_HEADERS: Json[] = [
  {
    in: 'header',
    name: 'webhook-id',
    required: true,
    description: 'the event id (the body’s `id`): the same on every retry and redelivery; deduplicate on it',
    schema: { type: 'string', format: 'uuid' },
  },
  {
    in: 'header',
    name: 'webhook-timestamp',
    required: true,
    description:
      'when this attempt was signed, in Unix seconds; refuse one more than 5 minutes from your clock',
    schema: { type: 'string', pattern: '^[0-9]+$' },
  },
  {
    in: 'header',
    name: 'webhook-signature',
    required: true,
    description:
      'space-separated `v1,<base64>` signatures (HMAC-SHA256 of `{webhook-id}.{webhook-timestamp}.{body}` ' +
      'under the endpoint’s secret, Standard Webhooks): the current secret’s first, then the previous one’s ' +
      'during a rotation; accept the request when any one verifies',
    schema: { type: 'string' },
  },
]

const copy = (schema: unknown): Json => JSON.parse(JSON.stringify(schema)) as Json

const summaryOf = (type: string) =>
  type === TEST_EVENT_TYPE
    ? 'Sent by POST /api/v1/webhook-endpoints/{webhookEndpointId}/test to that endpoint only'
    : `Sent to each enabled endpoint that chose \`${type}\` in its \`event_types\``

/**
 * The OpenAPI 3.1 `webhooks` of the document: one entry per event type, a POST of its event (JSON) to the
 * endpoint's URL with the signature headers. A 2xx answer within the time-out is a delivery; anything else is
 * retried (docs/webhooks.md). Schemas are inline and titled; `nameResponseSchemas` makes them components,
 * as it does for
 * responses: `WebhookEvent`, the body of every event, and one narrowed to each kind.
 */
export function webhooksOfDocument(): Record<string, Json> {
  const webhooks: Record<string, Json> = {}
  for (const type of [...WEBHOOK_EVENT_TYPES, TEST_EVENT_TYPE] as const) {
    webhooks[type] = {
      post: {
        operationId: `webhook_${type.replace('.', '_')}`,
        // Nothing to present: the receiver checks `webhook-signature` with the endpoint's secret.
        security: [],
        tags: ['Webhooks'],
        summary: summaryOf(type),
        parameters: SIGNATURE_HEADERS,
        requestBody: {
          required: true,
          content: { 'application/json': { schema: copy(WEBHOOK_EVENT_BODIES[type]) } },
        },
        responses: {
          '2XX': {
            description:
              'Received: the delivery is done. Answer at once and work after: a slow answer fails.',
          },
          default: {
            description:
              'Anything else (another status, no answer, a time-out) is a failed attempt, retried with back-off.',
          },
        },
      },
    }
  }
  return webhooks
}
