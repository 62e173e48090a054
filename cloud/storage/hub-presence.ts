import { valueByKey } from './batch-sql.ts'
import { batchedOn, groupsOfWeight, padded } from './batched.ts'
import { affected, type Sql } from './engine.ts'
import { HUB_REPORT_LINGER } from './hub-reports.ts'

/** Hubs per statement at most. */
const MAX_BATCH = 256
/** Hubs per statement at most when their printers are written. */
const MAX_PRINTER_BATCH = 128
/** Ids per statement at most (a power of two, so that a padded list stays within it). */
const MAX_IDS = 1024

/**
 * Whether each hub is online (`agents.online`, with the session that brought it online and the last one that
 * ended). A printer is online while its hub is and its hub's latest state report names it, read together
 * (`onlineWithHub` in printers.ts), so nothing here writes a printer's `online`.
 */
export interface HubPresenceRepository {
  /**
   * The hub connected with this MQTT session. Not a revoked hub: its `online` message may be handled after
   * the revocation cut it off. Returns whether it applied (false: no such hub, or revoked).
   */
  markOnline(agentId: string, sessionId: string, at: string): Promise<boolean>
  /**
   * The hub's session ended. Only the current session may take the hub offline: the last will of an old
   * connection that arrives after the hub reconnected changes nothing. Returns whether it went offline.
   * Without a session (a revoked hub), whichever session it has.
   */
  markOffline(agentId: string, sessionId: string | null, at: string): Promise<boolean>
  /** The hub went offline at `at`: its reported printers were last seen then. */
  printersLastSeen(agentId: string, at: string): Promise<void>
  /** After a restart of the embedded broker every session is gone. */
  markAllOffline(): Promise<void>
  /**
   * Every hub that is not revoked or, with `notSeenSince` (an ISO time), those of them that are offline or that
   * the cloud has not heard from since then (an external broker's node asks these to announce themselves after
   * it reconnects: a last will handled since then does not count, as the hub may have connected again).
   */
  unrevokedIds(notSeenSince?: string): Promise<string[]>
  /** Those of these hubs that are offline and not revoked. */
  offlineAmong(agentIds: readonly string[]): Promise<string[]>
}

type Presence = { agentId: string; sessionId: string; at: string; online: boolean }

/**
 * Every hub's connect and last will write its presence, batched (batched.ts): a fleet reconnecting after a
 * broker restart sends a presence each within seconds. Each write is one UPDATE for the hubs asked together,
 * each hub's values chosen by its id; a hub asked twice is written twice, in order.
 */
export function createHubPresenceRepository(sql: Sql): HubPresenceRepository {
  const { db } = sql
  const byAgent = (entries: readonly (readonly [string, string])[]) => valueByKey('agents.agent_id', entries)

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
    { maxBatch: MAX_BATCH, key: (item) => item.agentId, linger: HUB_REPORT_LINGER },
  )

  const printersLastSeen = batchedOn(
    sql,
    async (hubs: readonly { agentId: string; at: string }[]) => {
      const padding = padded(hubs)
      await db
        .updateTable('printers')
        .set({
          last_seen_at: valueByKey(
            'printers.agent_id',
            padding.map((hub) => [hub.agentId, hub.at] as const),
          ),
        })
        .where(
          'agent_id',
          'in',
          padding.map((hub) => hub.agentId),
        )
        .where('reported', '=', 1)
        .execute()
      return hubs.map(() => undefined)
    },
    { maxBatch: MAX_PRINTER_BATCH, key: (hub) => hub.agentId, linger: HUB_REPORT_LINGER },
  )

  return {
    markOnline: (agentId, sessionId, at) => presence({ agentId, sessionId, at, online: true }),
    async markOffline(agentId, sessionId, at) {
      if (sessionId !== null) return presence({ agentId, sessionId, at, online: false })
      const result = await db
        .updateTable('agents')
        .set({ online: 0, last_seen_at: at })
        .where('agent_id', '=', agentId)
        .executeTakeFirst()
      return affected(result) === 1
    },
    printersLastSeen: (agentId, at) => printersLastSeen({ agentId, at }),
    async markAllOffline() {
      await db.updateTable('agents').set({ online: 0 }).where('online', '=', 1).execute()
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
  }
}
