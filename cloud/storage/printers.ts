import { randomUUID } from 'node:crypto'
import type { ExpressionBuilder } from 'kysely'
import type { HubPrinter } from '../../protocol/hub-messages.ts'
import type { PageOf } from '../../protocol/pagination.ts'
import type { Printer, PrinterCapabilities } from '../../protocol/printer.ts'
import type { PrinterHealth } from '../../protocol/printer-health.ts'
import { batchedLookup } from './batched.ts'
import { forUpdate, inTransaction, type Sql } from './engine.ts'
import { pageAfter } from './paging.ts'
import { printerSyncs } from './printer-sync.ts'
import type { Database } from './schema.ts'

export interface NewPrinter {
  account_id: string
  agent_id: string
  name: string
  capabilities: PrinterCapabilities
  printer_id?: string
  /** Its hub's latest state report names it (it is online while its hub is); false by default. */
  reported?: boolean
  last_seen_at?: string | null
}

/** A printer as a new job needs it: with its key on its hub, which the hub's offer names. */
export interface JobPrinter extends Printer {
  printer_key: string | null
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
   * derived from agent and key); the agent's other printers are no longer reported. A printer is online while
   * its hub's latest report names it and its hub is online, each written on its own (the hub's presence by
   * hub-presence.ts), since several nodes may handle a hub's presence and its state report in either order.
   */
  syncFromHub(accountId: string, agentId: string, printers: HubPrinter[], at: string): Promise<void>
  locate(printerId: string): Promise<PrinterLocation | undefined>
  findById(accountId: string, printerId: string): Promise<Printer | undefined>
  /** As findById, with the printer's key on its hub. */
  findForJob(accountId: string, printerId: string): Promise<JobPrinter | undefined>
  list(accountId: string, limit: number, cursor?: string): Promise<PageOf<Printer> | undefined>
  /** The hub's printers as `list` shows them, newest first, all of them (its LAN credentials document). */
  listOfAgent(agentId: string): Promise<Printer[]>
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
  /** 1 while the printer is online (onlineWithHub). */
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

/**
 * The printer's `online` (1 or 0): its hub's latest state report names it and its hub is online. Read rather
 * than stored, so that no order of a hub's presence and state report leaves it wrong.
 */
export const onlineWithHub = (eb: ExpressionBuilder<Database, 'printers'>) =>
  eb
    .case()
    .when('printers.reported', '=', 1)
    .then(
      eb.selectFrom('agents').select('agents.online').whereRef('agents.agent_id', '=', 'printers.agent_id'),
    )
    .else(0)
    .end()
    .as('online')

export function createPrinterRepository(sql: Sql): PrinterRepository {
  const { db } = sql
  const columns = [
    'printer_id',
    'agent_id',
    'name',
    'capabilities',
    'health',
    'last_seen_at',
    'created_at',
  ] as const
  const printerById = batchedLookup(sql, {
    select: (printerIds: readonly string[]) =>
      db
        .selectFrom('printers')
        .select(['account_id', 'printer_key', ...columns, onlineWithHub])
        .where('printer_id', 'in', printerIds)
        .where('removed_at', 'is', null),
    keyOfRow: (row) => row.printer_id,
  })
  const syncs = printerSyncs(sql)
  async function findById(accountId: string, printerId: string): Promise<Printer | undefined> {
    const row = await printerById(printerId)
    return row?.account_id === accountId ? toPrinter(row) : undefined
  }
  async function findForJob(accountId: string, printerId: string): Promise<JobPrinter | undefined> {
    const row = await printerById(printerId)
    return row?.account_id === accountId ? { ...toPrinter(row), printer_key: row.printer_key } : undefined
  }
  return {
    remove: (printerId, at) =>
      inTransaction(sql, async (tx): Promise<PrinterRemoval> => {
        const printer = await forUpdate(
          tx,
          tx.db
            .selectFrom('printers')
            .select(['account_id', 'removed_at', onlineWithHub])
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
        const n = unfinished?.n ?? 0
        if (n > 0) return { removed: false, reason: 'unfinished_jobs', unfinished_jobs: n }
        await tx.db
          .updateTable('printers')
          .set({ removed_at: at, reported: 0 })
          .where('printer_id', '=', printerId)
          .execute()
        return { removed: true, printer_id: printerId, account_id: printer.account_id, removed_at: at }
      }),
    syncFromHub: syncs.syncFromHub,
    locate: (printerId) =>
      db
        .selectFrom('printers')
        .select(['printer_id', 'account_id', 'agent_id', 'printer_key'])
        .where('printer_id', '=', printerId)
        .executeTakeFirst(),
    async insert(printer) {
      const printerId = printer.printer_id ?? randomUUID()
      await db
        .insertInto('printers')
        .values({
          printer_id: printerId,
          account_id: printer.account_id,
          agent_id: printer.agent_id,
          name: printer.name,
          capabilities: JSON.stringify(printer.capabilities),
          reported: printer.reported ? 1 : 0,
          last_seen_at: printer.last_seen_at ?? null,
          created_at: new Date().toISOString(),
        })
        .execute()
      return (await findById(printer.account_id, printerId)) as Printer
    },
    findById,
    findForJob,
    async listOfAgent(agentId) {
      const rows = await db
        .selectFrom('printers')
        .select([...columns, onlineWithHub])
        .where('agent_id', '=', agentId)
        .where('removed_at', 'is', null)
        .orderBy('seq', 'desc')
        .execute()
      return rows.map(toPrinter)
    },
    list: (accountId, limit, cursor) =>
      pageAfter(db, {
        list: { table: 'printers', id: 'printer_id', scope: { account_id: accountId, removed_at: null } },
        cursor,
        limit,
        fetch: (seq) =>
          db
            .selectFrom('printers')
            .select([...columns, onlineWithHub])
            .where('account_id', '=', accountId)
            .where('seq', '<', seq)
            .where('removed_at', 'is', null)
            .orderBy('seq', 'desc')
            .limit(limit + 1)
            .execute(),
        map: toPrinter,
        idOf: (printer) => printer.printer_id,
      }),
  }
}
