import { type Static, Type } from 'typebox'
import { Agent } from './agent.ts'
import { PrintJob } from './print-job.ts'
import { Printer } from './printer.ts'

const DateTime = Type.String({ format: 'date-time' })
const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(schema: T) =>
  Type.Union([schema, Type.Null()])

/**
 * What an endpoint can subscribe to (docs/webhooks.md). A job's event is named by the status it entered
 * (`print_job.pending` when it is created or handed back, an expired job is `print_job.failed` with
 * `failure_reason` `expired`); hubs are `agent.*`, as the API names them (`GET /api/v1/agents`).
 */
export const WEBHOOK_EVENT_TYPES = [
  'print_job.pending',
  'print_job.reserved',
  'print_job.printing',
  'print_job.printed',
  'print_job.failed',
  'print_job.cancelled',
  'printer.online',
  'printer.offline',
  'printer.health_changed',
  'agent.online',
  'agent.offline',
] as const
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number]
/** Sent only by `POST /api/v1/webhook-endpoints/{id}/test`, to that endpoint; never subscribed to. */
export const TEST_EVENT_TYPE = 'webhook.test'
export const WebhookEventTypeSchema = Type.Enum(WEBHOOK_EVENT_TYPES, { title: 'WebhookEventType' })

/** Limits (docs/webhooks.md). */
export const WEBHOOK_LIMITS = {
  /** Endpoints per account. */
  endpointsPerAccount: 20,
  urlMaxLength: 2048,
  descriptionMaxLength: 200,
} as const

const EndpointUrl = Type.String({
  minLength: 9,
  maxLength: WEBHOOK_LIMITS.urlMaxLength,
  pattern: '^https://',
  description:
    'an `https` URL on the public internet; loopback, private and link-local addresses are refused when it is ' +
    'saved and again at each delivery',
})
const EventTypes = Type.Array(WebhookEventTypeSchema, {
  minItems: 1,
  maxItems: WEBHOOK_EVENT_TYPES.length,
  uniqueItems: true,
})
const Description = Type.String({ maxLength: WEBHOOK_LIMITS.descriptionMaxLength })

export const CreateWebhookEndpointBody = Type.Object(
  { url: EndpointUrl, event_types: EventTypes, description: Type.Optional(Description) },
  { title: 'CreateWebhookEndpointBody', additionalProperties: false },
)
export type CreateWebhookEndpointBody = Static<typeof CreateWebhookEndpointBody>

export const UpdateWebhookEndpointBody = Type.Object(
  {
    url: Type.Optional(EndpointUrl),
    event_types: Type.Optional(EventTypes),
    description: Type.Optional(Nullable(Description)),
    enabled: Type.Optional(
      Type.Boolean({ description: 'false pauses deliveries; true re-enables a paused or disabled endpoint' }),
    ),
  },
  { title: 'UpdateWebhookEndpointBody', additionalProperties: false, minProperties: 1 },
)
export type UpdateWebhookEndpointBody = Static<typeof UpdateWebhookEndpointBody>

export const WEBHOOK_DISABLED_REASONS = ['paused', 'failing'] as const

export const WebhookEndpoint = Type.Object(
  {
    webhook_endpoint_id: Type.String({ format: 'uuid' }),
    url: Type.String(),
    event_types: Type.Array(WebhookEventTypeSchema),
    description: Nullable(Type.String()),
    enabled: Type.Boolean(),
    disabled_reason: Type.Union([Type.Enum(WEBHOOK_DISABLED_REASONS), Type.Null()], {
      description:
        '`paused` by its owner, or `failing`: every delivery failed for the disable period (docs/webhooks.md); ' +
        'null while enabled',
    }),
    disabled_at: Nullable(DateTime),
    failing_since: Type.Union([DateTime, Type.Null()], {
      description: 'since when every delivery has failed; null after a success',
    }),
    created_at: DateTime,
    updated_at: DateTime,
  },
  { title: 'WebhookEndpoint', additionalProperties: false },
)
export type WebhookEndpoint = Static<typeof WebhookEndpoint>

const Secret = Type.String({
  pattern: '^whsec_[A-Za-z0-9+/]{43}=$',
  description: 'the signing secret (Standard Webhooks: `whsec_` and 32 bytes in base64); shown only here',
})

export const WebhookEndpointWithSecret = Type.Object(
  { ...WebhookEndpoint.properties, secret: Secret },
  { title: 'WebhookEndpointWithSecret', additionalProperties: false },
)
export type WebhookEndpointWithSecret = Static<typeof WebhookEndpointWithSecret>

export const RotateWebhookSecretBody = Type.Object(
  {
    previous_secret_valid_hours: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: 168,
        description: 'how long deliveries are also signed with the old secret (default 24; 0: not at all)',
      }),
    ),
  },
  { title: 'RotateWebhookSecretBody', additionalProperties: false },
)
export type RotateWebhookSecretBody = Static<typeof RotateWebhookSecretBody>

/** The body of every delivery: the event. */
export const WebhookEvent = Type.Object(
  {
    id: Type.String({
      format: 'uuid',
      description: 'the event id, also the `webhook-id` header; the same on every retry and redelivery',
    }),
    type: Type.Union([WebhookEventTypeSchema, Type.Literal(TEST_EVENT_TYPE)]),
    timestamp: Type.String({ format: 'date-time', description: 'when the change happened' }),
    account_id: Type.String({ format: 'uuid' }),
    data: Type.Union([PrintJob, Printer, Agent, Type.Object({})], {
      description:
        '`print_job.*`: the job as `GET /api/v1/print-jobs/{id}` returns it, as it was at the change; ' +
        '`printer.*`: the printer as `GET /api/v1/printers` lists it; `agent.*`: the hub as ' +
        '`GET /api/v1/agents` lists it; `webhook.test`: `{}`',
    }),
  },
  { title: 'WebhookEvent', additionalProperties: false },
)
export type WebhookEvent = Static<typeof WebhookEvent>

export const WEBHOOK_DELIVERY_STATES = ['pending', 'delivered', 'failed'] as const
export type WebhookDeliveryState = (typeof WEBHOOK_DELIVERY_STATES)[number]

export const WebhookDelivery = Type.Object(
  {
    webhook_delivery_id: Type.String({ format: 'uuid' }),
    webhook_endpoint_id: Type.String({ format: 'uuid' }),
    event_id: Type.String({ format: 'uuid' }),
    event_type: Type.String(),
    state: Type.Enum(WEBHOOK_DELIVERY_STATES, {
      description: '`pending` until the endpoint answers 2xx (`delivered`) or the retries run out (`failed`)',
    }),
    attempts: Type.Integer({ minimum: 0 }),
    next_attempt_at: Type.Union([DateTime, Type.Null()], { description: 'null once delivered or failed' }),
    created_at: DateTime,
    delivered_at: Nullable(DateTime),
  },
  { title: 'WebhookDelivery', additionalProperties: false },
)
export type WebhookDelivery = Static<typeof WebhookDelivery>

export const WebhookAttempt = Type.Object(
  {
    attempt: Type.Integer({ minimum: 1 }),
    attempted_at: DateTime,
    duration_ms: Type.Integer({ minimum: 0 }),
    status_code: Type.Union([Type.Integer(), Type.Null()], {
      description: "the endpoint's HTTP status; null when none came",
    }),
    error: Type.Union([Type.String(), Type.Null()], {
      description:
        'why it failed when no 2xx came (timeout, connection refused, a refused address…); null on success',
    }),
  },
  { title: 'WebhookAttempt', additionalProperties: false },
)
export type WebhookAttempt = Static<typeof WebhookAttempt>

export const WebhookEndpointIdParams = Type.Object({ webhookEndpointId: Type.String({ format: 'uuid' }) })
export const WebhookDeliveryIdParams = Type.Object({ webhookDeliveryId: Type.String({ format: 'uuid' }) })

/** GET /api/v1/webhook-endpoints: every endpoint of the account (at most WEBHOOK_LIMITS.endpointsPerAccount). */
export const WebhookEndpointList = Type.Object(
  {
    data: Type.Array(WebhookEndpoint),
    next_cursor: Type.Null({ description: 'always null: an account has few endpoints, listed on one page' }),
  },
  { title: 'WebhookEndpointList', additionalProperties: false },
)
export type WebhookEndpointList = Static<typeof WebhookEndpointList>

export const WebhookAttemptList = Type.Object(
  { data: Type.Array(WebhookAttempt, { description: 'every attempt of the delivery, first first' }) },
  { title: 'WebhookAttemptList', additionalProperties: false },
)

/**
 * The body of each kind of event, for the OpenAPI document's `webhooks` (one per event type): a WebhookEvent
 * whose `type` and `data` are narrowed to the kind.
 */
const eventOf = (title: string, types: readonly string[], data: Parameters<typeof Type.Object>[0][string]) =>
  Type.Intersect(
    [
      WebhookEvent,
      Type.Object({
        type: Type.Enum(types, { description: 'the event type, as chosen in `event_types`' }),
        data,
      }),
    ],
    { title },
  )
const ofFamily = (prefix: string) => WEBHOOK_EVENT_TYPES.filter((t) => t.startsWith(prefix))
export const PrintJobWebhookEvent = eventOf(
  'PrintJobWebhookEvent',
  ofFamily('print_job.'),
  Type.Union([PrintJob], {
    description: 'the job as `GET /api/v1/print-jobs/{printJobId}` returns it, as it was at the change',
  }),
)
export const PrinterWebhookEvent = eventOf(
  'PrinterWebhookEvent',
  ofFamily('printer.'),
  Type.Union([Printer], { description: 'the printer as `GET /api/v1/printers` lists it, at the change' }),
)
export const AgentWebhookEvent = eventOf(
  'AgentWebhookEvent',
  ofFamily('agent.'),
  Type.Union([Agent], { description: 'the hub as `GET /api/v1/agents` lists it, at the change' }),
)
export const TestWebhookEvent = eventOf(
  'TestWebhookEvent',
  [TEST_EVENT_TYPE],
  Type.Object({}, { additionalProperties: false, description: 'empty' }),
)
/** Which body each event type has. */
export const WEBHOOK_EVENT_BODIES = {
  ...Object.fromEntries(ofFamily('print_job.').map((t) => [t, PrintJobWebhookEvent])),
  ...Object.fromEntries(ofFamily('printer.').map((t) => [t, PrinterWebhookEvent])),
  ...Object.fromEntries(ofFamily('agent.').map((t) => [t, AgentWebhookEvent])),
  [TEST_EVENT_TYPE]: TestWebhookEvent,
} as Record<WebhookEventType | typeof TEST_EVENT_TYPE, typeof PrintJobWebhookEvent>
