import { randomUUID } from 'node:crypto'
import { sql } from 'kysely'
import { type OpenDatabase, openDatabase } from '../../cloud/storage/database.ts'
import {
  databaseLocation,
  type Storage,
  type StorageSettings,
  storageOn,
} from '../../cloud/storage/storage.ts'
import { resolveOptions } from '../../print-api/route-check.ts'

/**
 * The benchmark's own connection to the cloud's database (SQLite file or PostgreSQL): the repositories, to
 * enrol the simulated hubs, and two counts the cloud's API has no cheap answer for with thousands of hubs,
 * to see when the cloud has taken in what the hubs told it.
 */
export interface BenchDatabase {
  storage: Storage
  /** Hubs marked online by a presence handled at or after `since` (ISO time). */
  onlineSince(since: string): Promise<number>
  /** Printers the hubs' state reports created. */
  printers(): Promise<number>
  /** Their ids. */
  printerIds(): Promise<Set<string>>
  /**
   * A day of history, as a cloud that has been running has: `perPrinter` printed jobs on each printer, of a
   * document of its account that was purged since; then, on PostgreSQL, ANALYZE, as autovacuum would have
   * run by then. A fresh database has no statistics: PostgreSQL then plans a lookup of a few jobs by id by
   * scanning every printer's jobs (18 ms for 16 jobs among 8,000, against 0.3 ms with statistics), and keeps
   * that plan while the table grows.
   */
  seedHistory(perPrinter: number): Promise<void>
  /** Webhook deliveries written so far, and those not delivered yet. */
  webhookDeliveries(): Promise<{ written: number; undelivered: number }>
  /** Webhook attempts that failed, by error (webhooks-beside-dispatch.ts): `error × n`, most first. */
  failedWebhookAttempts(): Promise<string[]>
  close(): Promise<void>
}

export async function openBenchDatabase(settings: StorageSettings): Promise<BenchDatabase> {
  const database: OpenDatabase = await openDatabase(databaseLocation(settings))
  const { db } = database
  const storage = storageOn(database)
  return {
    storage,
    async onlineSince(since) {
      const row = await db
        .selectFrom('agents')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('online', '=', 1)
        .where('last_seen_at', '>=', since)
        .executeTakeFirstOrThrow()
      return Number(row.n)
    },
    async webhookDeliveries() {
      const row = await db
        .selectFrom('webhook_deliveries')
        .select((eb) => [
          eb.fn.countAll<number>().as('written'),
          eb.fn
            .sum<number>(eb.case().when('state', '<>', 'delivered').then(1).else(0).end())
            .as('undelivered'),
        ])
        .executeTakeFirstOrThrow()
      return { written: Number(row.written), undelivered: Number(row.undelivered ?? 0) }
    },
    async failedWebhookAttempts() {
      const rows = await db
        .selectFrom('webhook_attempts')
        .select((eb) => ['error', eb.fn.countAll<number>().as('n')])
        .where('error', 'is not', null)
        .groupBy('error')
        .orderBy('n', 'desc')
        .execute()
      return rows.map((row) => `${row.error} × ${row.n}`)
    },
    async printers() {
      const row = await db
        .selectFrom('printers')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('removed_at', 'is', null)
        .executeTakeFirstOrThrow()
      return Number(row.n)
    },
    async printerIds() {
      const rows = await db
        .selectFrom('printers')
        .select('printer_id')
        .where('removed_at', 'is', null)
        .execute()
      return new Set(rows.map((row) => row.printer_id))
    },
    async seedHistory(perPrinter) {
      const yesterday = new Date(Date.now() - 24 * 3600_000).toISOString()
      const printers = await db.selectFrom('printers').select(['printer_id', 'account_id']).execute()
      const documentOf = new Map<string, string>()
      for (const { account_id } of printers) {
        if (documentOf.has(account_id)) continue
        const document_id = randomUUID()
        documentOf.set(account_id, document_id)
        await db
          .insertInto('documents')
          .values({
            document_id,
            account_id,
            mime_type: 'application/vnd.escpos',
            format: 'raw',
            raw_language: 'escpos',
            size_bytes: 1000,
            sha256: randomUUID().replaceAll('-', ''),
            filename: null,
            created_at: yesterday,
            purged_at: null,
          })
          .execute()
      }
      const options = JSON.stringify(resolveOptions({}))
      const rows = printers.flatMap(({ printer_id, account_id }) =>
        Array.from({ length: perPrinter }, () => ({
          print_job_id: randomUUID(),
          account_id,
          document_id: documentOf.get(account_id) as string,
          printer_id,
          status: 'printed' as const,
          options,
          created_at: yesterday,
          offered_at: yesterday,
          reserved_at: yesterday,
          started_at: yesterday,
          completed_at: yesterday,
        })),
      )
      for (let i = 0; i < rows.length; i += 500)
        await db
          .insertInto('print_jobs')
          .values(rows.slice(i, i + 500))
          .execute()
      // Purged once its jobs were printed (a job cannot be created on a purged document).
      await db
        .updateTable('documents')
        .set({ purged_at: yesterday })
        .where('created_at', '=', yesterday)
        .execute()
      if (database.engine === 'postgres') await sql`ANALYZE`.execute(db)
    },
    close: () => storage.close(),
  }
}
