import { type Static, Type } from 'typebox'
import { ENROLLMENT_STATES } from './agent-api.ts'
import { Scope } from './enums.ts'
import { StoredText } from './stored-text.ts'

/**
 * The developer platform and partner API (spec: Developer platform, Partner management; the states and the
 * choices the spec leaves open are in docs/developer-platform.md).
 */

const Uuid = Type.String({ format: 'uuid' })

const DateTime = Type.String({ format: 'date-time' })

/** POST /developer-api/v1/app-installations/{installationId}/access-tokens */
export const InstallationTokenRequest = Type.Object(
  {
    permissions: Type.Optional(
      Type.Array(Type.String({ maxLength: 64 }), {
        maxItems: 16,
        description:
          "A subset of the installation's approved permissions; all of them when omitted. Anything else is a 422.",
      }),
    ),
  },
  { additionalProperties: false },
)
export type InstallationTokenRequest = Static<typeof InstallationTokenRequest>

export const InstallationToken = Type.Object(
  {
    access_token: Type.String({
      description: 'Bearer token for /api/v1 on the installation’s account; shown once, stored only hashed.',
    }),
    token_type: Type.Literal('Bearer'),
    expires_in: Type.Integer({ minimum: 1, description: 'seconds (ACCESS_TOKEN_TTL_SECONDS)' }),
    expires_at: DateTime,
    permissions: Type.Array(Scope),
    installation_id: Uuid,
    account_id: Uuid,
  },
  { title: 'InstallationToken', additionalProperties: false },
)
export type InstallationToken = Static<typeof InstallationToken>

export const MANAGED_ACCOUNT_STATES = ['active', 'suspended', 'closed'] as const
export type ManagedAccountState = (typeof MANAGED_ACCOUNT_STATES)[number]
export const ACCOUNT_ACTIONS = ['suspend', 'resume', 'close'] as const
export type AccountAction = (typeof ACCOUNT_ACTIONS)[number]

const Count = Type.Integer({ minimum: 0 })
export const HealthSummary = Type.Object(
  {
    agents: Type.Object(
      { total: Count, online: Count, offline: Count },
      { additionalProperties: false, description: 'Hubs not revoked.' },
    ),
    printers: Type.Object(
      {
        total: Count,
        online: Count,
        offline: Count,
        needs_attention: Type.Integer({
          minimum: 0,
          description:
            'Printers reporting a state other than ready, busy or unknown (paper out, cover open, …).',
        }),
      },
      { additionalProperties: false },
    ),
  },
  { title: 'HealthSummary', additionalProperties: false },
)
export type HealthSummary = Static<typeof HealthSummary>

export const ManagedAccount = Type.Object(
  {
    relationship_id: Uuid,
    account_id: Uuid,
    installation_id: Uuid,
    external_customer_id: Type.String(),
    name: Type.String(),
    permissions: Type.Array(Scope),
    state: Type.Enum(MANAGED_ACCOUNT_STATES, {
      title: 'ManagedAccountState',
      description:
        'active: everything works; suspended: its tokens, installation and jobs stop until resumed; closed: terminal.',
    }),
    created_at: DateTime,
    updated_at: DateTime,
    health: HealthSummary,
  },
  { title: 'ManagedAccount', additionalProperties: false },
)
export type ManagedAccount = Static<typeof ManagedAccount>

export const AgentOnboarding = Type.Object(
  {
    return_uri: StoredText({
      minLength: 1,
      maxLength: 2000,
      description: 'Where the hosted page sends the installer back: HTTPS, or http://localhost / 127.0.0.1.',
    }),
    state: StoredText({
      minLength: 1,
      maxLength: 500,
      description: 'An opaque single-use random value, returned unchanged on the redirect (as in OAuth).',
    }),
  },
  { additionalProperties: false },
)

export const ExternalCustomerId = StoredText({ minLength: 1, maxLength: 160 })
const Name = StoredText({ minLength: 1, maxLength: 200 })

export const CreateManagedAccountRequest = Type.Object(
  {
    external_customer_id: ExternalCustomerId,
    name: Name,
    permissions: Type.Array(Scope, { minItems: 1, maxItems: 4, uniqueItems: true }),
    agent_onboarding: AgentOnboarding,
  },
  { additionalProperties: false },
)
export type CreateManagedAccountRequest = Static<typeof CreateManagedAccountRequest>

export const AgentEnrollment = Type.Object(
  {
    enrollment_id: Uuid,
    relationship_id: Uuid,
    name: Type.String(),
    state: Type.Enum(ENROLLMENT_STATES, { title: 'AgentEnrollmentState' }),
    created_at: DateTime,
    expires_at: DateTime,
    claimed_at: Type.Union([DateTime, Type.Null()]),
    revoked_at: Type.Union([DateTime, Type.Null()]),
    agent_id: Type.Union([Uuid, Type.Null()]),
  },
  { title: 'AgentEnrollment', additionalProperties: false },
)
export type AgentEnrollment = Static<typeof AgentEnrollment>

const Secrets = {
  enrollment_token: Type.String({
    description: 'The enrollment token (`hub run --enroll TOKEN`); shown here only, stored only hashed.',
  }),
  onboarding_url: Type.String({
    description:
      'Single-use hosted page where an installer pairs the hub; valid until expires_at. Shown here only.',
  }),
}

export const IssuedAgentEnrollment = Type.Object(
  { ...AgentEnrollment.properties, ...Secrets },
  { title: 'IssuedAgentEnrollment', additionalProperties: false },
)
export type IssuedAgentEnrollment = Static<typeof IssuedAgentEnrollment>

export const ProvisionedManagedAccount = Type.Object(
  {
    ...ManagedAccount.properties,
    agent_enrollment: IssuedAgentEnrollment,
    onboarding_url: Secrets.onboarding_url,
  },
  { title: 'ProvisionedManagedAccount', additionalProperties: false },
)
export type ProvisionedManagedAccount = Static<typeof ProvisionedManagedAccount>

export const CreateAgentEnrollmentRequest = Type.Object(
  {
    name: Name,
    agent_onboarding: AgentOnboarding,
    replaces_enrollment_id: Type.Optional(
      Type.String({
        format: 'uuid',
        description: 'A pending enrollment of this account to revoke (404 if unknown).',
      }),
    ),
  },
  { additionalProperties: false },
)
export type CreateAgentEnrollmentRequest = Static<typeof CreateAgentEnrollmentRequest>

/** PATCH …/accounts/{relationshipId}/agents/{agentId}: what a partner changes of a managed account's hub. */
export const UpdateManagedAgentRequest = Type.Object(
  {
    lan_api_enabled: Type.Boolean({
      description: 'whether the hub serves the print API on its LAN while the cloud is out of reach',
    }),
  },
  { title: 'UpdateManagedAgentRequest', additionalProperties: false },
)
export type UpdateManagedAgentRequest = Static<typeof UpdateManagedAgentRequest>

export const PartnerIdempotencyKey = Type.String({
  minLength: 1,
  maxLength: 200,
  description:
    'Required. Binds the complete request: a retry with the same key and request replays the first answer ' +
    '(200 for an account, 201 for an enrollment, with Idempotent-Replayed: true); another request with it is a 409.',
})
