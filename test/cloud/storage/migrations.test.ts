import path from 'node:path'
import { sql } from 'kysely'
import { afterEach, describe, expect, it } from 'vitest'
import {
  migrateSqlite,
  openDatabase,
  openSqliteFile,
  schemaVersion,
  sqliteSchemaVersion,
} from '../../../cloud/storage/database.ts'
import { MIGRATIONS, type Migration } from '../../../cloud/storage/migrations.ts'
import { databaseLocation, openStorage } from '../../../cloud/storage/storage.ts'
import { tempDir } from '../../helpers/temp-dir.ts'
import { ENGINES, storageEngine } from './engines.ts'

const NEWEST = MIGRATIONS.at(-1)?.version
const ACCOUNT = '00000000-0000-4000-8000-000000000001'

describe('SQLite file', () => {
  const dirs: { remove(): void }[] = []
  afterEach(() => {
    for (const dir of dirs.splice(0)) dir.remove()
  })

  it('is created in WAL mode at the newest schema version', () => {
    const dir = tempDir()
    dirs.push(dir)
    const db = openSqliteFile(path.join(dir.path, 'fresh.sqlite'))
    migrateSqlite(db, MIGRATIONS)
    expect(db.pragma('journal_mode', { simple: true })).toBe('wal')
    expect(sqliteSchemaVersion(db)).toBe(NEWEST)
    db.close()
  })
})

describe.each(ENGINES)('migrations on %s', (engine) => {
  const engineUnderTest = storageEngine(engine)
  const cleanups: (() => unknown)[] = []
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
  })
  const fresh = async () => {
    const settings = await engineUnderTest.freshSettings()
    cleanups.push(settings.remove)
    return settings
  }

  it('upgrade an older database in place and keep its data', async () => {
    const settings = await fresh()
    const old = await openDatabase(databaseLocation(settings), { targetVersion: 1 })
    expect(await schemaVersion(old)).toBe(1)
    await old.db
      .insertInto('accounts')
      .values({ account_id: ACCOUNT, name: 'Old shop', created_at: '2026-01-01T00:00:00.000Z' })
      .execute()
    await old.close()

    const storage = await openStorage(settings)
    cleanups.push(() => storage.close())
    expect((await storage.accounts.findById(ACCOUNT))?.name).toBe('Old shop')
    const agent = await storage.agents.insert({ account_id: ACCOUNT, name: 'hub' })
    expect(agent.agent_id).toMatch(/^[0-9a-f-]{36}$/)
    const reopened = await openDatabase(databaseLocation(settings))
    cleanups.push(() => reopened.close())
    expect(await schemaVersion(reopened)).toBe(NEWEST)
  })

  it('refuse a database from a newer program', async () => {
    const settings = await fresh()
    const db = await openDatabase(databaseLocation(settings))
    await (engine === 'sqlite'
      ? sql`PRAGMA user_version = 999`.execute(db.db)
      : sql`UPDATE schema_version SET version = 999`.execute(db.db))
    await db.close()
    await expect(openDatabase(databaseLocation(settings))).rejects.toThrow(
      'database schema version 999 is newer than this program knows',
    )
  })

  it('apply each migration once when two nodes start together on one fresh database', async () => {
    const settings = await fresh()
    // The second migration is slow and counts its runs, so the two starts overlap and a double run shows.
    const migrations: Migration[] = [
      { version: 1, name: 'a table', sql: () => 'CREATE TABLE runs (n INTEGER NOT NULL);' },
      {
        version: 2,
        name: 'a slow step that counts its runs',
        sql: () => ({
          sqlite: 'INSERT INTO runs (n) VALUES (1);',
          postgres: 'SELECT pg_sleep(0.3); INSERT INTO runs (n) VALUES (1);',
        }),
      },
    ]
    const nodes = await Promise.all(
      [1, 2].map(() => openDatabase(databaseLocation(settings), { migrations, busyTimeoutMs: 5000 })),
    )
    for (const node of nodes) cleanups.push(() => node.close())
    const counted = await sql<{ n: number }>`SELECT count(*) AS n FROM runs`.execute(nodes[0]!.db)
    expect(Number(counted.rows[0]?.n)).toBe(1)
    for (const node of nodes) expect(await schemaVersion(node)).toBe(2)
  })
})
