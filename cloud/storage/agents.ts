import { randomUUID } from 'node:crypto'
import type { Agent } from '../../protocol/agent.ts'
import type { PageOf } from '../../protocol/pagination.ts'
import { groupsOfWeight, padded } from './batched.ts'
import { affected, type Sql } from './engine.ts'
import { hubReportWrites } from './hub-reports.ts'
import { pageAfter } from './paging.ts'
import type { HubReleaseRecord } from './release-pins.ts'

/** Ids per statement at most (a power of two, so that a padded list stays within it). */
const MAX_IDS = 1024

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
  insert(agent: NewAgent): Promise<Agent>
  /** The hub with this credential, unless it was revoked. */
  findByCredential(credentialHash: Buffer): Promise<AgentIdentity | undefined>
  findById(agentId: string): Promise<(Agent & { account_id: string }) | undefined>
  /**
   * The hub connected with this MQTT session. Not a revoked hub: its `online` message may be handled after
   * the revocation cut it off. Returns whether it applied (false: no such hub, or revoked).
   */
  markOnline(agentId: string, sessionId: string, at: string): Promise<boolean>
  /**
   * The hub's session ended. Only the current session may take the hub offline: the last will of an old
   * connection that arrives after the hub reconnected changes nothing. Returns whether it went offline.
   */
  markOffline(agentId: string, sessionId: string | null, at: string): Promise<boolean>
  /** After a restart of the embedded broker every session is gone. */
  markAllOffline(): Promise<void>
  /**
   * The hub reported its state, running `version`: returns what its release roll-out reads (its account, pins
   * and latest update report) from the same statement (undefined: no such hub), since every hub reports its
   * state on every connect and every health round.
   */
  setReportedVersion(agentId: string, version: string, at: string): Promise<HubReleaseRecord | undefined>
  /** Revokes the hub's credential; undefined when there is no such hub. Revoking twice keeps the first time. */
  revoke(agentId: string, now: Date): Promise<{ agent_id: string; revoked_at: string } | undefined>
  /** Hubs revoked at or after `since` (an ISO time), oldest first. */
  revokedSince(since: string): Promise<{ agent_id: string; revoked_at: string }[]>
  /**
   * Every hub that is not revoked or, with `notSeenSince` (an ISO time), those of them that are offline or that
   * the cloud has not heard from since then (an external broker's node asks these to announce themselves after
   * it reconnects: a last will handled since then does not count, as the hub may have connected again).
   */
  unrevokedIds(notSeenSince?: string): Promise<string[]>
  /** Those of these hubs that are offline and not revoked. */
  offlineAmong(agentIds: readonly string[]): Promise<string[]>
  /** Newest first. `cursor` is the id of the last agent of the previous page; unknown → undefined. */
  list(accountId: string, limit: number, cursor?: string): Promise<PageOf<Agent> | undefined>
  /** The account's hubs that are not revoked, newest first, all of them (the console lists an account's hubs). */
  listUnrevoked(accountId: string): Promise<Agent[]>
  /** The account's hub with this id unless it was revoked (another account's is undefined). */
  findUnrevoked(accountId: string, agentId: string): Promise<Agent | undefined>
  /** Names the account's hub anew unless it was revoked; whether it did. */
  rename(accountId: string, agentId: string, name: string): Promise<boolean>
}

interface AgentRow {
  agent_id: string
  name: string
  online: number
  last_seen_at: string | null
  version: string | null
  created_at: string
}

const AGENT_COLUMNS = ['agent_id', 'name', 'online', 'last_seen_at', 'version', 'created_at'] as const

const toAgent = (row: AgentRow): Agent => ({
  agent_id: row.agent_id,
  name: row.name,
  online: row.online === 1,
  last_seen_at: row.last_seen_at,
  version: row.version,
  created_at: row.created_at,
})

export function createAgentRepository(sql: Sql): AgentRepository {
  const { db } = sql
  const reports = hubReportWrites(sql)
  return {
    findByCredential: (credentialHash) =>
      db
        .selectFrom('agents')
        .select(['agent_id', 'account_id'])
        .where('credential_hash', '=', credentialHash)
        .where('revoked_at', 'is', null)
        .executeTakeFirst(),
    async revoke(agentId, now) {
      // One conditional UPDATE: the first revocation's time stays.
      await db
        .updateTable('agents')
        .set({ revoked_at: now.toISOString() })
        .where('agent_id', '=', agentId)
        .where('revoked_at', 'is', null)
        .execute()
      const row = await db
        .selectFrom('agents')
        .select(['agent_id', 'revoked_at'])
        .where('agent_id', '=', agentId)
        .where('revoked_at', 'is not', null)
        .executeTakeFirst()
      return row?.revoked_at ? { agent_id: row.agent_id, revoked_at: row.revoked_at } : undefined
    },
    async revokedSince(since) {
      const rows = await db
        .selectFrom('agents')
        .select(['agent_id', 'revoked_at'])
        .where('revoked_at', '>=', since)
        .orderBy('revoked_at')
        .execute()
      return rows.map((row) => ({ agent_id: row.agent_id, revoked_at: row.revoked_at ?? since }))
    },
    async findById(agentId) {
      const row = await db
        .selectFrom('agents')
        .select([...AGENT_COLUMNS, 'account_id'])
        .where('agent_id', '=', agentId)
        .executeTakeFirst()
      return row && { ...toAgent(row), account_id: row.account_id }
    },
    markOnline: reports.markOnline,
    async markOffline(agentId, sessionId, at) {
      if (sessionId !== null) return reports.markOffline(agentId, sessionId, at)
      const result = await db
        .updateTable('agents')
        .set({ online: 0, last_seen_at: at })
        .where('agent_id', '=', agentId)
        .executeTakeFirst()
      return affected(result) === 1
    },
    async unrevokedIds(notSeenSince) {
      let query = db.selectFrom('agents').select('agent_id').where('revoked_at', 'is', null)
      if (notSeenSince !== undefined)
        query = query.where((eb) =>
          eb.or([
            eb('online', '=', 0),
            eb('last_seen_at', 'is', null),
            eb('last_seen_at', '<', notSeenSince),
          ]),
        )
      const rows = await query.orderBy('agent_id').execute()
      return rows.map((row) => row.agent_id)
    },
    async offlineAmong(agentIds) {
      const offline: string[] = []
      // Under either engine's bound on a statement's parameters; padded, as every list of ids is (batched.ts).
      for (const group of groupsOfWeight(agentIds, () => 1, MAX_IDS)) {
        const rows = await db
          .selectFrom('agents')
          .select('agent_id')
          .where('agent_id', 'in', padded(group))
          .where('online', '=', 0)
          .where('revoked_at', 'is', null)
          .execute()
        offline.push(...rows.map((row) => row.agent_id))
      }
      return offline
    },
    async markAllOffline() {
      await db.updateTable('agents').set({ online: 0 }).where('online', '=', 1).execute()
    },
    setReportedVersion: reports.setReportedVersion,
    async insert(agent) {
      const row = {
        agent_id: agent.agent_id ?? randomUUID(),
        name: agent.name,
        online: agent.online ?? false,
        last_seen_at: agent.last_seen_at ?? null,
        version: agent.version ?? null,
        created_at: new Date().toISOString(),
      }
      await db
        .insertInto('agents')
        .values({ ...row, account_id: agent.account_id, online: row.online ? 1 : 0 })
        .execute()
      return row
    },
    async listUnrevoked(accountId) {
      const rows = await db
        .selectFrom('agents')
        .select(AGENT_COLUMNS)
        .where('account_id', '=', accountId)
        .where('revoked_at', 'is', null)
        .orderBy('seq', 'desc')
        .execute()
      return rows.map(toAgent)
    },
    async findUnrevoked(accountId, agentId) {
      const row = await db
        .selectFrom('agents')
        .select(AGENT_COLUMNS)
        .where('account_id', '=', accountId)
        .where('agent_id', '=', agentId)
        .where('revoked_at', 'is', null)
        .executeTakeFirst()
      return row && toAgent(row)
    },
    rename: async (accountId, agentId, name) =>
      affected(
        await db
          .updateTable('agents')
          .set({ name })
          .where('account_id', '=', accountId)
          .where('agent_id', '=', agentId)
          .where('revoked_at', 'is', null)
          .executeTakeFirst(),
      ) === 1,
    async list(accountId, limit, cursor) {
      const before =
        cursor === undefined
          ? Number.MAX_SAFE_INTEGER
          : (
              await db
                .selectFrom('agents')
                .select('seq')
                .where('account_id', '=', accountId)
                .where('agent_id', '=', cursor)
                .executeTakeFirst()
            )?.seq
      return pageAfter(
        before,
        (seq) =>
          db
            .selectFrom('agents')
            .select(AGENT_COLUMNS)
            .where('account_id', '=', accountId)
            .where('seq', '<', seq)
            .orderBy('seq', 'desc')
            .limit(limit + 1)
            .execute(),
        limit,
        toAgent,
        (agent) => agent.agent_id,
      )
    },
  }
}
