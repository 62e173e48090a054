import type { Kysely } from 'kysely'
import { afterAll, beforeAll } from 'vitest'
import { type OpenDatabase, openDatabase } from '../../../cloud/storage/database.ts'
import type { Engine } from '../../../cloud/storage/engine.ts'
import type { Database } from '../../../cloud/storage/schema.ts'
import { databaseLocation, type Storage, storageOn } from '../../../cloud/storage/storage.ts'
import { type PostgresServer, startPostgres } from '../../helpers/postgres-server.ts'
import { tempDir } from '../../helpers/temp-dir.ts'

/** Every engine the storage contract tests run against (describe.each). */
export const ENGINES: readonly Engine[] = ['sqlite', 'postgres']

export interface TestStorage {
  storage: Storage
  /** The same database through the query builder, for a test to arrange or inspect rows directly. */
  db: Kysely<Database>
  /** A directory of its own (the SQLite file, blobs). */
  dataDir: string
  /** Settings that open this same database again (a second node, a restart). */
  settings: { dataDir: string; databaseUrl?: string }
  close(): Promise<void>
}

/**
 * Storage on `engine` for the tests of one describe block: on PostgreSQL a throw-away server for the block
 * (started before its first test, stopped after its last) and a fresh database for each `open()`; on SQLite a
 * fresh file in a fresh directory.
 */
export function storageEngine(engine: Engine) {
  let server: PostgresServer | undefined
  beforeAll(async () => {
    if (engine === 'postgres') server = await startPostgres()
  })
  afterAll(async () => {
    await server?.stop()
  })
  return {
    /** Settings for a fresh, empty database on this engine (not opened yet). */
    async freshSettings(): Promise<{ dataDir: string; databaseUrl?: string; remove(): void }> {
      const dir = tempDir('storage-')
      if (engine === 'sqlite') return { dataDir: dir.path, remove: dir.remove }
      if (!server) throw new Error('the PostgreSQL server did not start')
      return { dataDir: dir.path, databaseUrl: await server.createDatabase(), remove: dir.remove }
    },
    async open(): Promise<TestStorage> {
      const { remove, ...settings } = await this.freshSettings()
      const database: OpenDatabase = await openDatabase(databaseLocation(settings))
      const storage = storageOn(database)
      return {
        storage,
        db: database.db,
        dataDir: settings.dataDir,
        settings,
        async close() {
          await storage.close()
          remove()
        },
      }
    },
  }
}
