import { randomUUID } from 'node:crypto'
import type { Agent } from '../../protocol/agent.ts'
import type { HubLanEndpoint } from '../../protocol/hub-messages.ts'
import type { PageOf } from '../../protocol/pagination.ts'
import { lanApiOf } from './agent-lan-api.ts'
import { affected, type Sql } from './engine.ts'
import { hubReportWrites } from './hub-reports.ts'
import { pageAfter } from './paging.ts'
import type { HubReleaseRecord } from './release-pins.ts'

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
   * The hub reported its state, running `version`, serving its LAN API at `lan` (null: not serving it): returns
   * what its release roll-out reads (its account, pins and latest update report) from the same statement
   * (undefined: no such hub), since every hub reports its state on every connect and every health round.
   */
  recordState(
    agentId: string,
    report: { version: string; lan: HubLanEndpoint | null },
    at: string,
  ): Promise<HubReleaseRecord | undefined>
  /**
   * Enables or disables the LAN API for the account's hub unless it was revoked, noting when (the nodes tell
   * the hub, presence/lan-refresh.ts); the hub as it is now, undefined when the account has no such hub.
   */
  setLanApi(accountId: string, agentId: string, enabled: boolean, at: string): Promise<Agent | undefined>
  /** The hub's account and whether the LAN API is enabled for it; undefined when there is no such hub. */
  lanApiOf(agentId: string): Promise<{ account_id: string; enabled: boolean } | undefined>
  /**
   * Hubs to tell `refresh_lan` about changes at or after `since` (an ISO time): each hub the LAN API was
   * enabled or disabled for, and each LAN-enabled hub of an account an API client was made or revoked in since
   * it was enabled; `at` is the change's time, so that one change is told once.
   */
  lanChangesSince(since: string): Promise<{ agent_id: string; at: string }[]>
  /** Revokes the hub's credential; undefined when there is no such hub. Revoking twice keeps the first time. */
  revoke(agentId: string, now: Date): Promise<{ agent_id: string; revoked_at: string } | undefined>
  /** Hubs revoked at or after `since` (an ISO time), oldest first. */
  revokedSince(since: string): Promise<{ agent_id: string; revoked_at: string }[]>
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
  lan_api_enabled: number
  lan_endpoint: string | null
}

const AGENT_COLUMNS = [
  'agent_id',
  'name',
  'online',
  'last_seen_at',
  'version',
  'created_at',
  'lan_api_enabled',
  'lan_endpoint',
] as const

const toAgent = (row: AgentRow): Agent => ({
  agent_id: row.agent_id,
  name: row.name,
  online: row.online === 1,
  last_seen_at: row.last_seen_at,
  version: row.version,
  created_at: row.created_at,
  lan_api: lanApiOf(row.lan_api_enabled, row.lan_endpoint),
})

export function createAgentRepository(sql: Sql): AgentRepository {
  const { db } = sql
  const reports = hubReportWrites(sql)
  async function findUnrevoked(accountId: string, agentId: string): Promise<Agent | undefined> {
    const row = await db
      .selectFrom('agents')
      .select(AGENT_COLUMNS)
      .where('account_id', '=', accountId)
      .where('agent_id', '=', agentId)
      .where('revoked_at', 'is', null)
      .executeTakeFirst()
    return row && toAgent(row)
  }
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
    recordState: reports.recordState,
    async setLanApi(accountId, agentId, enabled, at) {
      const result = await db
        .updateTable('agents')
        .set({ lan_api_enabled: enabled ? 1 : 0, lan_api_changed_at: at })
        .where('account_id', '=', accountId)
        .where('agent_id', '=', agentId)
        .where('revoked_at', 'is', null)
        .executeTakeFirst()
      if (affected(result) !== 1) return undefined
      return findUnrevoked(accountId, agentId)
    },
    async lanApiOf(agentId) {
      const row = await db
        .selectFrom('agents')
        .select(['account_id', 'lan_api_enabled'])
        .where('agent_id', '=', agentId)
        .executeTakeFirst()
      return row && { account_id: row.account_id, enabled: row.lan_api_enabled === 1 }
    },
    async lanChangesSince(since) {
      const toggled = await db
        .selectFrom('agents')
        .select(['agent_id', 'lan_api_changed_at as at'])
        .where('lan_api_changed_at', '>=', since)
        .where('revoked_at', 'is', null)
        .execute()
      const clientChanges = await db
        .selectFrom('api_clients as c')
        .innerJoin('agents as a', 'a.account_id', 'c.account_id')
        .select(['a.agent_id', 'a.lan_api_changed_at', 'c.created_at', 'c.revoked_at'])
        .where((eb) => eb.or([eb('c.created_at', '>=', since), eb('c.revoked_at', '>=', since)]))
        .where('a.lan_api_enabled', '=', 1)
        .where('a.revoked_at', 'is', null)
        .execute()
      return [
        ...toggled.flatMap((row) => (row.at === null ? [] : [{ agent_id: row.agent_id, at: row.at }])),
        ...clientChanges.flatMap((row) =>
          [row.created_at, row.revoked_at]
            .filter((at): at is string => at !== null && at >= since && at > (row.lan_api_changed_at ?? ''))
            .map((at) => ({ agent_id: row.agent_id, at })),
        ),
      ]
    },
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
      return { ...row, lan_api: lanApiOf(0, null) }
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
    findUnrevoked,
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
    list: (accountId, limit, cursor) =>
      pageAfter(db, {
        list: { table: 'agents', id: 'agent_id', scope: { account_id: accountId } },
        cursor,
        limit,
        fetch: (seq) =>
          db
            .selectFrom('agents')
            .select(AGENT_COLUMNS)
            .where('account_id', '=', accountId)
            .where('seq', '<', seq)
            .orderBy('seq', 'desc')
            .limit(limit + 1)
            .execute(),
        map: toAgent,
        idOf: (agent) => agent.agent_id,
      }),
  }
}
