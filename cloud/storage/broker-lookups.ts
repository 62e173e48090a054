import Database from 'better-sqlite3'
import { ConfigError } from '../config.ts'
import type { AgentIdentity } from './agents.ts'
import { DEFAULT_BUSY_TIMEOUT_MS } from './database.ts'
import { databaseLocation, type StorageSettings } from './storage.ts'

/**
 * The two questions the embedded broker asks about hubs, answered synchronously: its policy
 * (cloud/broker/broker-policy.ts) and the revoked-hub watch (cloud/broker/revoked-hubs.ts) take synchronous
 * lookups, while the repositories are asynchronous. Until those take promises, they get these answers from a
 * read-only connection of their own to the SQLite file (the same rows AgentRepository reads). On PostgreSQL
 * there is no synchronous client: the cloud then needs an external broker (MQTT_URL), which several nodes
 * need anyway, since an embedded broker serves only the hubs connected to its own node.
 */
export interface BrokerLookups {
  findAgentByCredential(credentialHash: Buffer): AgentIdentity | undefined
  revokedSince(since: string): { agent_id: string; revoked_at: string }[]
  close(): void
}

export function openBrokerLookups(settings: StorageSettings): BrokerLookups {
  const location = databaseLocation(settings)
  if (!('sqliteFile' in location)) {
    throw new ConfigError(
      'DATABASE_URL',
      'PostgreSQL needs an external MQTT broker (set MQTT_URL); the embedded broker runs only with SQLite',
    )
  }
  const db = new Database(location.sqliteFile, { readonly: true })
  db.pragma(`busy_timeout = ${Math.trunc(settings.busyTimeoutMs ?? DEFAULT_BUSY_TIMEOUT_MS)}`)
  const byCredential = db.prepare<[Buffer], AgentIdentity>(
    'SELECT agent_id, account_id FROM agents WHERE credential_hash = ? AND revoked_at IS NULL',
  )
  const revoked = db.prepare<[string], { agent_id: string; revoked_at: string }>(
    'SELECT agent_id, revoked_at FROM agents WHERE revoked_at >= ? ORDER BY revoked_at',
  )
  return {
    findAgentByCredential: (credentialHash) => byCredential.get(credentialHash),
    revokedSince: (since) => revoked.all(since),
    close: () => db.close(),
  }
}
