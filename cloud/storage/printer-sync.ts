import type { HubPrinter } from '../../protocol/hub-messages.ts'
import { printerIdFor } from '../../protocol/printer-id.ts'
import { batchedOn, groupsOfWeight, padded, powersOfTwo } from './batched.ts'
import type { Sql } from './engine.ts'
import { HUB_REPORT_LINGER } from './hub-reports.ts'

interface HubState {
  accountId: string
  agentId: string
  printers: HubPrinter[]
  at: string
}

/** Hubs per batch at most. */
const MAX_BATCH = 128
/**
 * Printers per statement at most: a hub reports up to 256 (hub-messages.ts), and 128 hubs' printers at 11
 * parameters each would pass the bound of a statement's parameters (32,766 on SQLite, 65,535 on PostgreSQL).
 */
const MAX_PRINTERS = 1024

/**
 * What a hub's state report writes of its printers, for the hubs asked together (batched.ts): every hub
 * reports its state on each connect and after each health round, so 19,500 hubs at rest send 650 reports a
 * second. A batch of reports is, for each group of its hubs naming up to 1,024 printers, an upsert of every
 * printer they name (a few multi-row INSERTs) and one UPDATE that takes out of the reports the printers of
 * those hubs that they leave out; no transaction: a report names all of its hub's printers, so a batch cut
 * short (the node died between the statements) leaves at worst a printer its hub no longer reports online, and
 * the hub's next report completes it.
 */
export function printerSyncs(sql: Sql) {
  const { db } = sql
  /** The hubs' printers upserted, and those of these hubs that their reports leave out unreported. */
  const syncGroup = async (hubs: readonly HubState[]) => {
    const rows = hubs.flatMap(({ accountId, agentId, printers, at }) =>
      printers.map((p) => ({
        printer_id: printerIdFor(agentId, p.key),
        account_id: accountId,
        agent_id: agentId,
        name: p.name,
        capabilities: JSON.stringify(p.capabilities),
        reported: 1,
        last_seen_at: at,
        created_at: at,
        printer_key: p.key,
        uri: p.uri,
        health: JSON.stringify(p.health),
      })),
    )
    for (const piece of powersOfTwo(rows))
      await db
        .insertInto('printers')
        .values(piece)
        .onConflict((conflict) =>
          conflict.column('printer_id').doUpdateSet((eb) => ({
            name: eb.ref('excluded.name'),
            capabilities: eb.ref('excluded.capabilities'),
            reported: eb.ref('excluded.reported'),
            last_seen_at: eb.ref('excluded.last_seen_at'),
            uri: eb.ref('excluded.uri'),
            health: eb.ref('excluded.health'),
            removed_at: null,
          })),
        )
        .execute()
    // Printer ids derive from their hub, so no report's printer is another hub's.
    let leftOut = db
      .updateTable('printers')
      .set({ reported: 0 })
      .where('agent_id', 'in', padded(hubs.map((hub) => hub.agentId)))
      .where('reported', '=', 1)
    if (rows.length > 0)
      leftOut = leftOut.where('printer_id', 'not in', padded(rows.map((row) => row.printer_id)))
    await leftOut.execute()
  }
  const sync = batchedOn(
    sql,
    async (hubs: readonly HubState[]) => {
      for (const group of groupsOfWeight(hubs, (hub) => hub.printers.length, MAX_PRINTERS))
        await syncGroup(group)
      return hubs.map(() => undefined)
    },
    { maxBatch: MAX_BATCH, key: (hub) => hub.agentId, linger: HUB_REPORT_LINGER },
  )

  return {
    syncFromHub: (accountId: string, agentId: string, printers: HubPrinter[], at: string) =>
      sync({ accountId, agentId, printers, at }),
  }
}
