import { type OpenDatabase, openDatabase } from '../../cloud/storage/database.ts'
import {
  databaseLocation,
  type Storage,
  type StorageSettings,
  storageOn,
} from '../../cloud/storage/storage.ts'

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
    close: () => storage.close(),
  }
}
