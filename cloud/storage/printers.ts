import { randomUUID } from 'node:crypto'
import type { HubPrinter } from '../../protocol/hub-messages.ts'
import type { PageOf } from '../../protocol/pagination.ts'
import type { Printer, PrinterCapabilities } from '../../protocol/printer.ts'
import type { PrinterHealth } from '../../protocol/printer-health.ts'
import { printerIdFor } from '../auth/stable-id.ts'
import { forUpdate, inTransaction, type Sql } from './engine.ts'
import { pageAfter } from './paging.ts'

export interface NewPrinter {
  account_id: string
  agent_id: string
  name: string
  capabilities: PrinterCapabilities
  printer_id?: string
  online?: boolean
  last_seen_at?: string | null
}

export interface PrinterLocation {
  printer_id: string
  account_id: string
  agent_id: string
  printer_key: string | null
}

export interface PrinterRepository {
  insert(printer: NewPrinter): Promise<Printer>
  /**
   * Makes the agent's printers what its hub reports: each reported printer is created or updated (its id
   * derived from agent and key) and is online while its hub is (a report that arrives after the hub went
   * offline cannot bring it back); the agent's other printers go offline.
   */
  syncFromHub(
    accountId: string,
    agentId: string,
    printers: HubPrinter[],
    at: string,
    agentOnline: boolean,
  ): Promise<void>
  setAgentPrintersOffline(agentId: string, at: string): Promise<void>
  /** After a restart of the embedded broker no hub is connected, so no printer is reachable. */
  markAllOffline(): Promise<void>
  locate(printerId: string): Promise<PrinterLocation | undefined>
  findById(accountId: string, printerId: string): Promise<Printer | undefined>
  list(accountId: string, limit: number, cursor?: string): Promise<PageOf<Printer> | undefined>
  /**
   * Removes a printer no hub reports any more: it leaves every list and lookup, its jobs stay readable, and
   * it comes back if its hub reports it again. Refused while it is online or has unfinished jobs.
   */
  remove(printerId: string, at: string): Promise<PrinterRemoval>
}

export type PrinterRemoval =
  | { removed: true; printer_id: string; account_id: string; removed_at: string }
  | { removed: false; reason: 'not_found' | 'online' }
  | { removed: false; reason: 'unfinished_jobs'; unfinished_jobs: number }

interface PrinterRow {
  health?: string | null
  printer_id: string
  agent_id: string
  name: string
  capabilities: string
  online: number
  last_seen_at: string | null
  created_at: string
}

const toPrinter = (row: PrinterRow): Printer => {
  const capabilities = JSON.parse(row.capabilities) as PrinterCapabilities
  return {
    printer_id: row.printer_id,
    agent_id: row.agent_id,
    name: row.name,
    languages: capabilities.raw_languages,
    capabilities,
    online: row.online === 1,
    health: row.health ? (JSON.parse(row.health) as PrinterHealth) : null,
    last_seen_at: row.last_seen_at,
    created_at: row.created_at,
  }
}

export function createPrinterRepository(sql: Sql): PrinterRepository {
  const { db } = sql
  const columns = [
    'printer_id',
    'agent_id',
    'name',
    'capabilities',
    'online',
    'health',
    'last_seen_at',
    'created_at',
  ] as const
  return {
    remove: (printerId, at) =>
      inTransaction(sql, async (tx): Promise<PrinterRemoval> => {
        const printer = await forUpdate(
          tx,
          tx.db
            .selectFrom('printers')
            .select(['account_id', 'online', 'removed_at'])
            .where('printer_id', '=', printerId),
        ).executeTakeFirst()
        if (!printer || printer.removed_at !== null) return { removed: false, reason: 'not_found' }
        if (printer.online === 1) return { removed: false, reason: 'online' }
        const unfinished = await tx.db
          .selectFrom('print_jobs')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .where('printer_id', '=', printerId)
          .where('status', 'in', ['pending', 'reserved', 'printing'])
          .executeTakeFirst()
        const n = Number(unfinished?.n ?? 0)
        if (n > 0) return { removed: false, reason: 'unfinished_jobs', unfinished_jobs: n }
        await tx.db
          .updateTable('printers')
          .set({ removed_at: at, online: 0 })
          .where('printer_id', '=', printerId)
          .execute()
        return { removed: true, printer_id: printerId, account_id: printer.account_id, removed_at: at }
      }),
    async syncFromHub(accountId, agentId, printers, at, agentOnline) {
      // Two statements, no transaction: every hub reports its state on each connect, so a reconnect storm of
      // thousands of hubs costs the database two round trips per hub rather than four (BEGIN and COMMIT).
      // A report names all of the hub's printers, so one cut short (the node died between the statements)
      // leaves at worst a printer it no longer reports offline, and the next report completes it.
      const ids = printers.map((p) => printerIdFor(agentId, p.key))
      let others = db
        .updateTable('printers')
        .set({ online: 0 })
        .where('agent_id', '=', agentId)
        .where('online', '=', 1)
      if (ids.length > 0) others = others.where('printer_id', 'not in', ids)
      await others.execute()
      if (printers.length === 0) return
      await db
        .insertInto('printers')
        .values(
          printers.map((p, i) => ({
            printer_id: ids[i]!,
            account_id: accountId,
            agent_id: agentId,
            name: p.name,
            capabilities: JSON.stringify(p.capabilities),
            online: agentOnline ? 1 : 0,
            last_seen_at: at,
            created_at: at,
            printer_key: p.key,
            uri: p.uri,
            health: JSON.stringify(p.health),
          })),
        )
        .onConflict((conflict) =>
          conflict.column('printer_id').doUpdateSet((eb) => ({
            name: eb.ref('excluded.name'),
            capabilities: eb.ref('excluded.capabilities'),
            online: eb.ref('excluded.online'),
            last_seen_at: eb.ref('excluded.last_seen_at'),
            uri: eb.ref('excluded.uri'),
            health: eb.ref('excluded.health'),
            removed_at: null,
          })),
        )
        .execute()
    },
    async setAgentPrintersOffline(agentId, at) {
      await db
        .updateTable('printers')
        .set({ online: 0, last_seen_at: at })
        .where('agent_id', '=', agentId)
        .where('online', '=', 1)
        .execute()
    },
    async markAllOffline() {
      await db.updateTable('printers').set({ online: 0 }).where('online', '=', 1).execute()
    },
    locate: (printerId) =>
      db
        .selectFrom('printers')
        .select(['printer_id', 'account_id', 'agent_id', 'printer_key'])
        .where('printer_id', '=', printerId)
        .executeTakeFirst(),
    async insert(printer) {
      const row: PrinterRow = {
        printer_id: printer.printer_id ?? randomUUID(),
        agent_id: printer.agent_id,
        name: printer.name,
        capabilities: JSON.stringify(printer.capabilities),
        online: printer.online ? 1 : 0,
        last_seen_at: printer.last_seen_at ?? null,
        created_at: new Date().toISOString(),
      }
      await db
        .insertInto('printers')
        .values({ ...row, account_id: printer.account_id })
        .execute()
      return toPrinter(row)
    },
    async findById(accountId, printerId) {
      const row = await db
        .selectFrom('printers')
        .select(columns)
        .where('account_id', '=', accountId)
        .where('printer_id', '=', printerId)
        .where('removed_at', 'is', null)
        .executeTakeFirst()
      return row && toPrinter(row)
    },
    async list(accountId, limit, cursor) {
      const before =
        cursor === undefined
          ? Number.MAX_SAFE_INTEGER
          : (
              await db
                .selectFrom('printers')
                .select('seq')
                .where('account_id', '=', accountId)
                .where('printer_id', '=', cursor)
                .where('removed_at', 'is', null)
                .executeTakeFirst()
            )?.seq
      return pageAfter(
        before,
        (seq) =>
          db
            .selectFrom('printers')
            .select(columns)
            .where('account_id', '=', accountId)
            .where('seq', '<', seq)
            .where('removed_at', 'is', null)
            .orderBy('seq', 'desc')
            .limit(limit + 1)
            .execute(),
        limit,
        toPrinter,
        (printer) => printer.printer_id,
      )
    },
  }
}
