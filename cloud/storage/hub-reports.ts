import { valueByKey } from './batch-sql.ts'
import { batchedOn, padded } from './batched.ts'
import type { Sql } from './engine.ts'
import { type HubReleaseRecord, toHubReleaseRecord } from './release-pins.ts'

/** Hubs per statement at most. */
const MAX_BATCH = 256
/**
 * Nobody waits on these writes, so a batch waits a little for more hubs: at rest, 19,500 hubs' reports arrive
 * a few milliseconds apart on each node, too far apart to meet in one turn of the event loop.
 */
export const HUB_REPORT_LINGER = { ms: 20, items: 64 }

/**
 * What every hub's connect and health round writes of it (its presence and its state report), batched
 * (batched.ts): 19,500 hubs at rest send 650 state reports a second, and a fleet reconnecting after a broker
 * restart sends a presence and a state report each within seconds. Each write is one UPDATE for the hubs
 * asked together, each hub's values chosen by its id; a hub asked twice is written twice, in order.
 */
export function hubReportWrites(sql: Sql) {
  const { db } = sql
  const byAgent = (entries: readonly (readonly [string, string])[]) => valueByKey('agents.agent_id', entries)
  const agentKey = {
    maxBatch: MAX_BATCH,
    key: (item: { agentId: string }) => item.agentId,
    linger: HUB_REPORT_LINGER,
  }

  type Presence = { agentId: string; sessionId: string; at: string; online: boolean }
  /**
   * A connection brings its hub online unless the hub is revoked or that connection's end was already handled
   * (its last will may reach a node before its presence, or a presence the hub repeated may come after its
   * will). Answers the hubs whose row changed.
   */
  const markOnline = async (items: readonly Presence[]): Promise<Set<string>> => {
    if (items.length === 0) return new Set()
    const hubs = padded(items)
    const sessions = byAgent(hubs.map((hub) => [hub.agentId, hub.sessionId]))
    const rows = await db
      .updateTable('agents')
      .set({
        online: 1,
        last_seen_at: byAgent(hubs.map((hub) => [hub.agentId, hub.at])),
        session_id: sessions,
      })
      .where(
        'agent_id',
        'in',
        hubs.map((hub) => hub.agentId),
      )
      .where('revoked_at', 'is', null)
      .where((eb) => eb.or([eb('ended_session_id', 'is', null), eb('ended_session_id', '<>', sessions)]))
      .returning('agent_id')
      .execute()
    return new Set(rows.map((row) => row.agent_id))
  }
  /**
   * A connection's end takes its hub offline if it is the hub's current session, and is kept either way
   * (ended_session_id), so that the presence of that connection, handled later, changes nothing. Answers the
   * hubs whose current session ended.
   */
  const markOffline = async (items: readonly Presence[]): Promise<Set<string>> => {
    if (items.length === 0) return new Set()
    const hubs = padded(items)
    const sessions = byAgent(hubs.map((hub) => [hub.agentId, hub.sessionId]))
    const ats = byAgent(hubs.map((hub) => [hub.agentId, hub.at]))
    const rows = await db
      .updateTable('agents')
      .set((eb) => ({
        online: eb.case().when('session_id', '=', sessions).then(0).else(eb.ref('online')).end(),
        last_seen_at: eb
          .case()
          .when('session_id', '=', sessions)
          .then(ats)
          .else(eb.ref('last_seen_at'))
          .end(),
        ended_session_id: sessions,
      }))
      .where(
        'agent_id',
        'in',
        hubs.map((hub) => hub.agentId),
      )
      .returning(['agent_id', 'session_id', 'ended_session_id'])
      .execute()
    return new Set(rows.filter((row) => row.session_id === row.ended_session_id).map((row) => row.agent_id))
  }
  /**
   * One batcher for both, keyed by hub, so that a hub's connect and the will of that same connection apply in
   * the order they came whatever else waits (with one batcher each, the will could run first and, not yet
   * the hub's session, change nothing). A round holds a hub once, so its two statements touch different
   * rows; either may run again after the other if the batch fails (batched.ts), which writes the same values.
   */
  const presence = batchedOn(
    sql,
    async (items: readonly Presence[]) => {
      const marked = new Set([
        ...(await markOnline(items.filter((item) => item.online))),
        ...(await markOffline(items.filter((item) => !item.online))),
      ])
      return items.map((item) => marked.has(item.agentId))
    },
    agentKey,
  )

  const setReportedVersion = batchedOn(
    sql,
    async (items: readonly { agentId: string; version: string; at: string }[]) => {
      const hubs = padded(items)
      const rows = await db
        .updateTable('agents')
        .set({
          version: byAgent(hubs.map((hub) => [hub.agentId, hub.version])),
          last_seen_at: byAgent(hubs.map((hub) => [hub.agentId, hub.at])),
        })
        .where(
          'agent_id',
          'in',
          hubs.map((hub) => hub.agentId),
        )
        .returning((eb) => [
          'agent_id',
          'account_id',
          'version',
          'release_pin as hub_pin',
          'update_report',
          eb
            .selectFrom('accounts')
            .select('accounts.release_pin')
            .whereRef('accounts.account_id', '=', 'agents.account_id')
            .as('account_pin'),
        ])
        .execute()
      const byId = new Map(rows.map((row) => [row.agent_id, row]))
      return items.map((item): HubReleaseRecord | undefined => {
        const row = byId.get(item.agentId)
        return row && toHubReleaseRecord(row)
      })
    },
    agentKey,
  )

  return {
    markOnline: (agentId: string, sessionId: string, at: string) =>
      presence({ agentId, sessionId, at, online: true }),
    markOffline: (agentId: string, sessionId: string, at: string) =>
      presence({ agentId, sessionId, at, online: false }),
    setReportedVersion: (agentId: string, version: string, at: string) =>
      setReportedVersion({ agentId, version, at }),
  }
}
