import type { HubLanEndpoint } from '../../protocol/hub-messages.ts'
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
 * What every hub's state report writes of it (its presence is written by hub-presence.ts), batched (batched.ts): 19,500
 * hubs at rest send 650 state reports a second, and a fleet reconnecting after a broker restart sends one each
 * within seconds. Each write is one UPDATE for the hubs asked together, each hub's values chosen by its id; a
 * hub asked twice is written twice, in order.
 */
export function hubReportWrites(sql: Sql) {
  const { db } = sql
  const byAgent = <V extends string | null>(entries: readonly (readonly [string, V])[]) =>
    valueByKey('agents.agent_id', entries)
  const recordState = batchedOn(
    sql,
    async (
      items: readonly { agentId: string; version: string; lan: HubLanEndpoint | null; at: string }[],
    ) => {
      const hubs = padded(items)
      const rows = await db
        .updateTable('agents')
        .set({
          version: byAgent(hubs.map((hub) => [hub.agentId, hub.version])),
          last_seen_at: byAgent(hubs.map((hub) => [hub.agentId, hub.at])),
          lan_endpoint: byAgent(hubs.map((hub) => [hub.agentId, hub.lan && JSON.stringify(hub.lan)])),
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
    { maxBatch: MAX_BATCH, key: (item) => item.agentId, linger: HUB_REPORT_LINGER },
  )

  return {
    recordState: (agentId: string, report: { version: string; lan: HubLanEndpoint | null }, at: string) =>
      recordState({ agentId, ...report, at }),
  }
}
