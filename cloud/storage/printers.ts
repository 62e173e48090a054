import { randomUUID } from 'node:crypto'
import type { HubPrinter } from '../../protocol/hub-messages.ts'
import type { PageOf } from '../../protocol/pagination.ts'
import type { Printer, PrinterCapabilities } from '../../protocol/printer.ts'
import type { PrinterHealth } from '../../protocol/printer-health.ts'
import { printerIdFor } from '../auth/stable-id.ts'
import type { SqliteDatabase } from './database.ts'
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
  insert(printer: NewPrinter): Printer
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
  ): void
  setAgentPrintersOffline(agentId: string, at: string): void
  /** After a restart of the embedded broker no hub is connected, so no printer is reachable. */
  markAllOffline(): void
  locate(printerId: string): PrinterLocation | undefined
  findById(accountId: string, printerId: string): Printer | undefined
  list(accountId: string, limit: number, cursor?: string): PageOf<Printer> | undefined
  /**
   * Removes a printer no hub reports any more: it leaves every list and lookup, its jobs stay readable, and
   * it comes back if its hub reports it again. Refused while it is online or has unfinished jobs.
   */
  remove(printerId: string, at: string): PrinterRemoval
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

export function createPrinterRepository(db: SqliteDatabase): PrinterRepository {
  const insert = db.prepare(
    `INSERT INTO printers (printer_id, account_id, agent_id, name, capabilities, online, last_seen_at, created_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
  )
  const byId = db.prepare<[string, string], PrinterRow>(
    'SELECT * FROM printers WHERE account_id = ? AND printer_id = ? AND removed_at IS NULL',
  )
  const seqOf = db.prepare<[string, string], { seq: number }>(
    'SELECT seq FROM printers WHERE account_id = ? AND printer_id = ? AND removed_at IS NULL',
  )
  const page = db.prepare<[string, number, number], PrinterRow>(
    'SELECT * FROM printers WHERE account_id = ? AND seq < ? AND removed_at IS NULL ORDER BY seq DESC LIMIT ?',
  )
  const upsert = db.prepare(
    `INSERT INTO printers (printer_id, account_id, agent_id, name, capabilities, online, last_seen_at, created_at,
       printer_key, uri, health)
     VALUES (@printer_id, @account_id, @agent_id, @name, @capabilities, @online, @at, @at, @key, @uri, @health)
     ON CONFLICT (printer_id) DO UPDATE SET name = excluded.name, capabilities = excluded.capabilities,
       online = excluded.online, last_seen_at = excluded.last_seen_at, uri = excluded.uri, health = excluded.health,
       removed_at = NULL`,
  )
  const othersOffline = db.prepare<[string, string]>(
    'UPDATE printers SET online = 0 WHERE agent_id = ? AND online = 1 AND printer_id NOT IN (SELECT value FROM json_each(?))',
  )
  const allOffline = db.prepare(
    'UPDATE printers SET online = 0, last_seen_at = ? WHERE agent_id = ? AND online = 1',
  )
  const everyOffline = db.prepare('UPDATE printers SET online = 0 WHERE online = 1')
  const locate = db.prepare<[string], PrinterLocation>(
    'SELECT printer_id, account_id, agent_id, printer_key FROM printers WHERE printer_id = ?',
  )
  const sync = db.transaction(
    (accountId: string, agentId: string, printers: HubPrinter[], at: string, agentOnline: boolean) => {
      const ids: string[] = []
      for (const p of printers) {
        const printerId = printerIdFor(agentId, p.key)
        ids.push(printerId)
        upsert.run({
          printer_id: printerId,
          account_id: accountId,
          agent_id: agentId,
          name: p.name,
          capabilities: JSON.stringify(p.capabilities),
          at,
          key: p.key,
          uri: p.uri,
          health: JSON.stringify(p.health),
          online: agentOnline ? 1 : 0,
        })
      }
      othersOffline.run(agentId, JSON.stringify(ids))
    },
  )
  const removable = db.prepare<[string], { account_id: string; online: number; removed_at: string | null }>(
    'SELECT account_id, online, removed_at FROM printers WHERE printer_id = ?',
  )
  const unfinishedJobs = db.prepare<[string], { n: number }>(
    "SELECT count(*) AS n FROM print_jobs WHERE printer_id = ? AND status IN ('pending', 'reserved', 'printing')",
  )
  const markRemoved = db.prepare('UPDATE printers SET removed_at = ?, online = 0 WHERE printer_id = ?')
  const remove = db.transaction((printerId: string, at: string): PrinterRemoval => {
    const printer = removable.get(printerId)
    if (!printer || printer.removed_at !== null) return { removed: false, reason: 'not_found' }
    if (printer.online === 1) return { removed: false, reason: 'online' }
    const unfinished = unfinishedJobs.get(printerId)?.n ?? 0
    if (unfinished > 0) return { removed: false, reason: 'unfinished_jobs', unfinished_jobs: unfinished }
    markRemoved.run(at, printerId)
    return { removed: true, printer_id: printerId, account_id: printer.account_id, removed_at: at }
  })
  return {
    remove: (printerId, at) => remove.immediate(printerId, at),
    syncFromHub: (accountId, agentId, printers, at, agentOnline) =>
      sync.immediate(accountId, agentId, printers, at, agentOnline),
    setAgentPrintersOffline(agentId, at) {
      allOffline.run(at, agentId)
    },
    markAllOffline() {
      everyOffline.run()
    },
    locate: (printerId) => locate.get(printerId),
    insert(printer) {
      const row: PrinterRow = {
        printer_id: printer.printer_id ?? randomUUID(),
        agent_id: printer.agent_id,
        name: printer.name,
        capabilities: JSON.stringify(printer.capabilities),
        online: printer.online ? 1 : 0,
        last_seen_at: printer.last_seen_at ?? null,
        created_at: new Date().toISOString(),
      }
      insert.run(
        row.printer_id,
        printer.account_id,
        row.agent_id,
        row.name,
        row.capabilities,
        row.online,
        row.last_seen_at,
        row.created_at,
      )
      return toPrinter(row)
    },
    findById(accountId, printerId) {
      const row = byId.get(accountId, printerId)
      return row && toPrinter(row)
    },
    list(accountId, limit, cursor) {
      return pageAfter(
        cursor === undefined ? Number.MAX_SAFE_INTEGER : seqOf.get(accountId, cursor)?.seq,
        (before) => page.all(accountId, before, limit + 1),
        limit,
        toPrinter,
        (printer) => printer.printer_id,
      )
    },
  }
}
