import type { Kysely } from 'kysely'
import { afterEach, beforeEach } from 'vitest'
import { type OpenDatabase, openDatabase } from '../../../cloud/storage/database.ts'
import type { Engine } from '../../../cloud/storage/engine.ts'
import type { Database } from '../../../cloud/storage/schema.ts'
import { databaseLocation, type Storage, storageOn } from '../../../cloud/storage/storage.ts'
import { testDatabases } from '../../helpers/postgres-server.ts'
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
 * Storage on `engine` for the tests of one describe block: on PostgreSQL a fresh database on the run's server
 * for each `open()` (dropped after the block's last test); on SQLite a fresh file in a fresh directory.
 */
export function storageEngine(engine: Engine) {
  const databases = engine === 'postgres' ? testDatabases() : undefined
  return {
    /**
     * Settings for a fresh database on this engine (not opened yet): on PostgreSQL a copy of the run's
     * database at the newest schema, or with `empty` an empty database, for tests of the migrations; on
     * SQLite an empty directory either way.
     */
    async freshSettings({ empty = false } = {}): Promise<{
      dataDir: string
      databaseUrl?: string
      remove(): void
    }> {
      const dir = tempDir('storage-')
      if (!databases) return { dataDir: dir.path, remove: dir.remove }
      const databaseUrl = await (empty ? databases.empty() : databases.migrated())
      return { dataDir: dir.path, databaseUrl, remove: dir.remove }
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

/**
 * A fresh database on `engine` for each test of the calling describe block, opened before the test and closed
 * after it: its storage, query builder, directory and settings, read within a test.
 */
export function storageForEachTest(engine: Engine): Omit<TestStorage, 'close'> {
  const engineUnderTest = storageEngine(engine)
  let current: TestStorage | undefined
  beforeEach(async () => {
    current = await engineUnderTest.open()
  })
  afterEach(async () => {
    await current?.close()
    current = undefined
  })
  const open = (): TestStorage => {
    if (!current) throw new Error('the test storage is open only while a test runs')
    return current
  }
  return {
    get storage() {
      return open().storage
    },
    get db() {
      return open().db
    },
    get dataDir() {
      return open().dataDir
    },
    get settings() {
      return open().settings
    },
  }
}
