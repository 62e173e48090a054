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

export interface AgentRepository {
  insert(agent: NewAgent): Agent
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
  return {
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
