import { randomUUID } from 'node:crypto'
import type { PageOf } from '../../protocol/pagination.ts'
import type { Printer, PrinterCapabilities } from '../../protocol/printer.ts'
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

export interface PrinterRepository {
  insert(printer: NewPrinter): Printer
  findById(accountId: string, printerId: string): Printer | undefined
  list(accountId: string, limit: number, cursor?: string): PageOf<Printer> | undefined
}

interface PrinterRow {
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
    'SELECT * FROM printers WHERE account_id = ? AND printer_id = ?',
  )
  const seqOf = db.prepare<[string, string], { seq: number }>(
    'SELECT seq FROM printers WHERE account_id = ? AND printer_id = ?',
  )
  const page = db.prepare<[string, number, number], PrinterRow>(
    'SELECT * FROM printers WHERE account_id = ? AND seq < ? ORDER BY seq DESC LIMIT ?',
  )
  return {
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
