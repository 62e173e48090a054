import type { Generated } from 'kysely'
import type { PrintJobStatus } from '../../protocol/enums.ts'

/**
 * The cloud's tables as Kysely sees them, one interface per table, the same on SQLite and PostgreSQL
 * (migrations.ts creates them). Times are ISO 8601 text (they sort as text), except the epoch milliseconds of
 * tokens and idempotency records; flags are integers 0/1 on both engines.
 */
export interface Database {
  accounts: AccountsTable
  api_clients: ApiClientsTable
  access_tokens: AccessTokensTable
  agents: AgentsTable
  printers: PrintersTable
  documents: DocumentsTable
  print_jobs: PrintJobsTable
  idempotency_keys: IdempotencyKeysTable
  enrollments: EnrollmentsTable
  account_storage: AccountStorageTable
  blob_deletions: BlobDeletionsTable
  applications: ApplicationsTable
  application_keys: ApplicationKeysTable
  used_assertions: UsedAssertionsTable
  app_installations: AppInstallationsTable
  installation_tokens: InstallationTokensTable
  managed_accounts: ManagedAccountsTable
  pairings: PairingsTable
  users: UsersTable
  console_sessions: ConsoleSessionsTable
  set_password_tokens: SetPasswordTokensTable
  sign_in_failures: SignInFailuresTable
  served_catalogs: ServedCatalogsTable
  webhook_endpoints: WebhookEndpointsTable
  webhook_subscriptions: WebhookSubscriptionsTable
  webhook_events: WebhookEventsTable
  webhook_deliveries: WebhookDeliveriesTable
  webhook_attempts: WebhookAttemptsTable
}

export interface AccountsTable {
  account_id: string
  name: string
  created_at: string
  /** The hub release this account's hubs run instead of the catalog's current one (docs/hub-updates.md). */
  release_pin: string | null
  state: Generated<'active' | 'suspended' | 'closed'>
}

export interface ApiClientsTable {
  client_id: string
  account_id: string
  /** 1 to 100 characters; null for a client made without one. */
  name: string | null
  secret_hash: Buffer
  /** Space-separated. */
  scopes: string
  created_at: string
  revoked_at: string | null
}

export interface AccessTokensTable {
  token_hash: Buffer
  client_id: string
  account_id: string
  scopes: string
  expires_at: number
  created_at: string
}

export interface AgentsTable {
  seq: Generated<number>
  agent_id: string
  account_id: string
  name: string
  online: number
  last_seen_at: string | null
  version: string | null
  created_at: string
  credential_hash: Buffer | null
  hostname: string | null
  session_id: string | null
  /** The session of the latest last will (or goodbye) handled: that connection cannot bring the hub online. */
  ended_session_id: string | null
  revoked_at: string | null
  /** The hub release this hub runs, before its account's pin and the catalog's current one. */
  release_pin: string | null
  /** JSON of the hub's latest HubUpdate, as it reported it; null when it reported none. */
  update_report: string | null
  /** 1 when the hub may serve the print API on its LAN (docs/lan-printing.md). */
  lan_api_enabled: Generated<number>
  /** When the LAN API was last enabled or disabled for the hub; null if never. */
  lan_api_changed_at: Generated<string | null>
  /** JSON of the HubLanEndpoint of the hub's latest state report; null when that report had none. */
  lan_endpoint: Generated<string | null>
}

export interface PrintersTable {
  seq: Generated<number>
  printer_id: string
  account_id: string
  agent_id: string
  name: string
  /** JSON of PrinterCapabilities. */
  capabilities: string
  /** 1 while its hub's latest state report names it (it is online while that holds and its hub is online). */
  reported: number
  last_seen_at: string | null
  created_at: string
  printer_key: string | null
  uri: string | null
  /** JSON of PrinterHealth. */
  health: string | null
  removed_at: string | null
}

export interface DocumentsTable {
  document_id: string
  account_id: string
  mime_type: string
  format: string
  raw_language: string | null
  size_bytes: number
  sha256: string
  filename: string | null
  created_at: string
  purged_at: string | null
  /** The bytes of a small RAW document (migration 24); null for the others and once purged. */
  content: Buffer | null
}

export interface PrintJobsTable {
  seq: Generated<number>
  print_job_id: string
  account_id: string
  document_id: string
  printer_id: string
  status: PrintJobStatus
  /** JSON of the resolved print options. */
  options: string
  created_at: string
  reserved_at: string | null
  started_at: string | null
  completed_at: string | null
  failure_reason: string | null
  offered_at: string | null
  cancel_requested_at: string | null
  cancel_reason: string | null
  waiting_reason: string | null
  failure_detail: string | null
  /** 'cloud', or 'lan': taken on a hub's LAN API (docs/lan-printing.md). */
  origin: Generated<'cloud' | 'lan'>
  /** JSON {endpoint, key, fingerprint}: the Idempotency-Key the job was created with, if any. */
  idempotency: Generated<string | null>
  /** The LAN job that printed this job's request; the hub dropped this one. */
  duplicate_of: Generated<string | null>
}

export interface IdempotencyKeysTable {
  account_id: string
  endpoint: string
  key: string
  fingerprint: string
  state: 'in_progress' | 'completed'
  status_code: number | null
  response_body: string | null
  locked_until: number
  expires_at: number
}

export interface EnrollmentsTable {
  seq: Generated<number>
  enrollment_id: string
  account_id: string
  name: string
  token_hash: Buffer
  state: 'pending' | 'claimed' | 'revoked'
  created_at: string
  expires_at: string
  claimed_at: string | null
  revoked_at: string | null
  agent_id: string | null
  onboarding_hash: Buffer | null
  return_uri: string | null
  return_state: string | null
  onboarding_used_at: string | null
  /** Wrong pairing codes typed on this enrollment's onboarding page (a guessing limit per link). */
  pairing_failures: Generated<number>
}

/** A hub's RFC 8628 pairing: codes hashed; enrollment and agent set once an installer typed its code. */
export interface PairingsTable {
  pairing_id: string
  device_code_hash: Buffer
  user_code_hash: Buffer
  hostname: string
  created_at: string
  /** Epoch milliseconds. */
  expires_at: number
  interval_seconds: number
  last_polled_at: number | null
  enrollment_id: string | null
  agent_id: string | null
  delivered_at: string | null
}

export interface AccountStorageTable {
  account_id: string
  retained_bytes: number
}

export interface BlobDeletionsTable {
  sha256: string
  queued_at: string
}

export interface ApplicationsTable {
  app_id: string
  name: string
  partner: number
  created_at: string
}

export interface ApplicationKeysTable {
  app_id: string
  kid: string
  /** JSON of the RS256 public JWK. */
  public_jwk: string
  created_at: string
}

export interface UsedAssertionsTable {
  app_id: string
  jti: string
  expires_at: number
}

export interface AppInstallationsTable {
  installation_id: string
  app_id: string
  account_id: string
  /** Space-separated scopes. */
  permissions: string
  active: number
  created_at: string
}

export interface InstallationTokensTable {
  token_hash: Buffer
  installation_id: string
  account_id: string
  scopes: string
  expires_at: number
  created_at: string
}

export interface ManagedAccountsTable {
  seq: Generated<number>
  relationship_id: string
  app_id: string
  account_id: string
  installation_id: string
  external_customer_id: string
  created_at: string
  updated_at: string
}

/** A person who signs in to the account console (docs/console.md). */
export interface UsersTable {
  user_id: string
  account_id: string
  /** Lower-cased; unique within an account (docs/console.md: another account may have the same address). */
  email: string
  role: 'owner' | 'member'
  /** `scrypt$N$r$p$salt$hash` (cloud/auth/passwords.ts); null until the person sets one. */
  password_hash: string | null
  created_at: string
}

/** A console session (@fastify/session's store): the id only as its SHA-256 digest. */
export interface ConsoleSessionsTable {
  session_hash: Buffer
  /** The signed-in user, so that removing a user ends their sessions; null before sign-in. */
  user_id: string | null
  /** JSON of the session's data. */
  data: string
  /** Epoch milliseconds: past it the row is no session (idle expiry) and is purged. */
  expires_at: number
}

/** A one-time set-password link: the token only as its SHA-256 digest. */
export interface SetPasswordTokensTable {
  token_hash: Buffer
  user_id: string
  /** Epoch milliseconds. */
  expires_at: number
  used_at: string | null
}

/** Failed sign-ins counted per address and per e-mail (`ip:…`, `email:…`) in a fixed window. */
export interface SignInFailuresTable {
  counter_key: string
  failures: number
  /** Epoch milliseconds. */
  window_started_at: number
}

/** Per release key, the highest catalog serial served and the SHA-256 (hex) of that catalog's text. */
export interface ServedCatalogsTable {
  key_id: string
  serial: number
  sha256: string
  served_at: string
}

export interface WebhookEndpointsTable {
  seq: Generated<number>
  endpoint_id: string
  account_id: string
  url: string
  description: string | null
  /** Sealed (cloud/webhooks/secret-box.ts), never the secret itself. */
  secret: string
  previous_secret: string | null
  /** Epoch ms until which deliveries are also signed with `previous_secret`. */
  previous_secret_until: number | null
  enabled: number
  disabled_reason: 'paused' | 'failing' | null
  disabled_at: string | null
  failing_since: string | null
  created_at: string
  updated_at: string
}

export interface WebhookSubscriptionsTable {
  endpoint_id: string
  account_id: string
  event_type: string
}

export interface WebhookEventsTable {
  seq: Generated<number>
  event_id: string
  account_id: string
  type: string
  subject_id: string
  occurred_at: string
  /** JSON of what changed, as it was at the change (webhook-triggers.ts). */
  snapshot: string
  /** The body sent, rendered at the first delivery and kept. */
  payload: string | null
}

export interface WebhookDeliveriesTable {
  seq: Generated<number>
  delivery_id: string
  event_id: string
  endpoint_id: string
  account_id: string
  state: 'pending' | 'delivered' | 'failed'
  attempts: number
  /** Epoch ms; null once delivered or failed. */
  next_attempt_at: number | null
  /** Epoch ms: the lease of the node attempting it. */
  claimed_until: number | null
  created_at: string
  created_at_ms: number
  delivered_at: string | null
}

export interface WebhookAttemptsTable {
  delivery_id: string
  attempt: number
  attempted_at: string
  duration_ms: number
  status_code: number | null
  error: string | null
}
