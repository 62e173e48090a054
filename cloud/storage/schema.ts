import type { Generated } from 'kysely'

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
}

export interface AccountsTable {
  account_id: string
  name: string
  created_at: string
  /** The hub release this account's hubs run instead of the catalog's current one (docs/hub-updates.md). */
  release_pin: string | null
}

export interface ApiClientsTable {
  client_id: string
  account_id: string
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
  revoked_at: string | null
  /** The hub release this hub runs, before its account's pin and the catalog's current one. */
  release_pin: string | null
  /** JSON of the hub's latest HubUpdate, as it reported it; null when it reported none. */
  update_report: string | null
}

export interface PrintersTable {
  seq: Generated<number>
  printer_id: string
  account_id: string
  agent_id: string
  name: string
  /** JSON of PrinterCapabilities. */
  capabilities: string
  online: number
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
}

export interface PrintJobsTable {
  seq: Generated<number>
  print_job_id: string
  account_id: string
  document_id: string
  printer_id: string
  status: string
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
}

export interface AccountStorageTable {
  account_id: string
  retained_bytes: number
}

export interface BlobDeletionsTable {
  sha256: string
  queued_at: string
}
