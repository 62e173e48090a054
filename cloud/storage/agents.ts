import { randomUUID } from 'node:crypto'
import type { Agent } from '../../protocol/agent.ts'
import type { PageOf } from '../../protocol/pagination.ts'
import type { SqliteDatabase } from './database.ts'
import { pageAfter } from './paging.ts'

export interface NewAgent {
  account_id: string
  name: string
  agent_id?: string
  online?: boolean
  last_seen_at?: string | null
  version?: string | null
}

export interface AgentIdentity {
  agent_id: string
  account_id: string
}

export interface AgentRepository {
  insert(agent: NewAgent): Agent
  /** The hub with this credential, unless it was revoked. */
  findByCredential(credentialHash: Buffer): AgentIdentity | undefined
  findById(agentId: string): (Agent & { account_id: string }) | undefined
  /** The hub connected with this MQTT session. */
  markOnline(agentId: string, sessionId: string, at: string): void
  /**
   * The hub's session ended. Only the current session may take the hub offline: the last will of an old
   * connection that arrives after the hub reconnected changes nothing. Returns whether it went offline.
   */
  markOffline(agentId: string, sessionId: string | null, at: string): boolean
  /** After a restart of the embedded broker every session is gone. */
  markAllOffline(): void
  setReportedVersion(agentId: string, version: string, at: string): void
  /** Revokes the hub's credential; undefined when there is no such hub. Revoking twice keeps the first time. */
  revoke(agentId: string, now: Date): { agent_id: string; revoked_at: string } | undefined
  /** Hubs revoked at or after `since` (an ISO time), oldest first. */
  revokedSince(since: string): { agent_id: string; revoked_at: string }[]
  /** Newest first. `cursor` is the id of the last agent of the previous page; unknown → undefined. */
  list(accountId: string, limit: number, cursor?: string): PageOf<Agent> | undefined
}

interface AgentRow {
  seq: number
  agent_id: string
  name: string
  online: number
  last_seen_at: string | null
  version: string | null
  created_at: string
}

const toAgent = (row: AgentRow): Agent => ({
  agent_id: row.agent_id,
  name: row.name,
  online: row.online === 1,
  last_seen_at: row.last_seen_at,
  version: row.version,
  created_at: row.created_at,
})

export function createAgentRepository(db: SqliteDatabase): AgentRepository {
  const insert = db.prepare(
    'INSERT INTO agents (agent_id, account_id, name, online, last_seen_at, version, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
  )
  const seqOf = db.prepare<[string, string], { seq: number }>(
    'SELECT seq FROM agents WHERE account_id = ? AND agent_id = ?',
  )
  const page = db.prepare<[string, number, number], AgentRow>(
    'SELECT * FROM agents WHERE account_id = ? AND seq < ? ORDER BY seq DESC LIMIT ?',
  )
  const byCredential = db.prepare<[Buffer], AgentIdentity>(
    'SELECT agent_id, account_id FROM agents WHERE credential_hash = ? AND revoked_at IS NULL',
  )
  const markRevoked = db.prepare('UPDATE agents SET revoked_at = ? WHERE agent_id = ? AND revoked_at IS NULL')
  const revocation = db.prepare<[string], { agent_id: string; revoked_at: string }>(
    'SELECT agent_id, revoked_at FROM agents WHERE agent_id = ? AND revoked_at IS NOT NULL',
  )
  const revokedSince = db.prepare<[string], { agent_id: string; revoked_at: string }>(
    'SELECT agent_id, revoked_at FROM agents WHERE revoked_at >= ? ORDER BY revoked_at',
  )
  const byId = db.prepare<[string], AgentRow & { account_id: string }>(
    'SELECT * FROM agents WHERE agent_id = ?',
  )
  const online = db.prepare(
    'UPDATE agents SET online = 1, session_id = ?, last_seen_at = ? WHERE agent_id = ?',
  )
  const offline = db.prepare(
    'UPDATE agents SET online = 0, last_seen_at = ? WHERE agent_id = ? AND (? IS NULL OR session_id = ?)',
  )
  const allOffline = db.prepare('UPDATE agents SET online = 0 WHERE online = 1')
  const version = db.prepare('UPDATE agents SET version = ?, last_seen_at = ? WHERE agent_id = ?')
  return {
    findByCredential: (credentialHash) => byCredential.get(credentialHash),
    revoke(agentId, now) {
      markRevoked.run(now.toISOString(), agentId)
      return revocation.get(agentId)
    },
    revokedSince: (since) => revokedSince.all(since),
    findById(agentId) {
      const row = byId.get(agentId)
      return row && { ...toAgent(row), account_id: row.account_id }
    },
    markOnline(agentId, sessionId, at) {
      online.run(sessionId, at, agentId)
    },
    markOffline: (agentId, sessionId, at) => offline.run(at, agentId, sessionId, sessionId).changes === 1,
    markAllOffline() {
      allOffline.run()
    },
    setReportedVersion(agentId, reported, at) {
      version.run(reported, at, agentId)
    },
    insert(agent) {
      const row = {
        agent_id: agent.agent_id ?? randomUUID(),
        name: agent.name,
        online: agent.online ?? false,
        last_seen_at: agent.last_seen_at ?? null,
        version: agent.version ?? null,
        created_at: new Date().toISOString(),
      }
      insert.run(
        row.agent_id,
        agent.account_id,
        row.name,
        row.online ? 1 : 0,
        row.last_seen_at,
        row.version,
        row.created_at,
      )
      return row
    },
    list(accountId, limit, cursor) {
      return pageAfter(
        cursor === undefined ? Number.MAX_SAFE_INTEGER : seqOf.get(accountId, cursor)?.seq,
        (before) => page.all(accountId, before, limit + 1),
        limit,
        toAgent,
        (agent) => agent.agent_id,
      )
    },
  }
}
