import path from 'node:path'
import { sql } from 'kysely'
import pg from 'pg'
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
import { hashSecret } from '../../../print-api/secrets.ts'
import { testDatabases } from '../../helpers/postgres-server.ts'
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

describe('a PostgreSQL database, once closed', () => {
  const databases = testDatabases()

  // A database with a session in it cannot be a template or be dropped; a process waits for its pool's idle
  // connections. Kysely ends its pool only once it has run a query, and the migration's connection is there.
  it('has no connection left open, also when no query ran after the migration', async () => {
    const url = await databases.empty()
    const database = await openDatabase({ postgresUrl: url })
    await database.close()
    const others = new pg.Client({ connectionString: url })
    await others.connect()
    try {
      const count = async () =>
        (
          await others.query<{ n: number }>(
            'SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()',
          )
        ).rows[0]?.n
      // A backend ends just after its client has gone.
      await expect.poll(count, { timeout: 3000 }).toBe(0)
    } finally {
      await others.end()
    }
  })
})

describe.each(ENGINES)('migrations on %s', (engine) => {
  const engineUnderTest = storageEngine(engine)
  const cleanups: (() => unknown)[] = []
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
  })
  // An empty database, whatever the engine: these tests migrate it themselves.
  const fresh = async () => {
    const settings = await engineUnderTest.freshSettings({ empty: true })
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

  it('make console e-mails unique within an account, keeping the users and their set-password links', async () => {
    const perAccount = MIGRATIONS.find((m) => m.name === 'console e-mails unique within an account')
    const settings = await fresh()
    const old = await openDatabase(databaseLocation(settings), {
      targetVersion: (perAccount?.version ?? 0) - 1,
    })
    const user = {
      user_id: '00000000-0000-4000-8000-0000000000a1',
      account_id: ACCOUNT,
      email: 'ann@example.test',
      role: 'owner' as const,
      password_hash: 'scrypt$1$1$1$a$b',
      created_at: '2026-01-01T00:00:00.000Z',
    }
    await old.db
      .insertInto('accounts')
      .values({ account_id: ACCOUNT, name: 'Old shop', created_at: user.created_at })
      .execute()
    await old.db.insertInto('users').values(user).execute()
    const link = hashSecret('old-link')
    await old.db
      .insertInto('set_password_tokens')
      .values({ token_hash: link, user_id: user.user_id, expires_at: Date.now() + 3_600_000, used_at: null })
      .execute()
    await old.close()

    const storage = await openStorage(settings)
    cleanups.push(() => storage.close())
    expect((await storage.users.findSetPasswordLink(link, Date.now())).state).toBe('open')
    const other = (await storage.accounts.create('Other')).account_id
    const elsewhere = await storage.users.create(
      { accountId: other, email: 'ANN@example.test', role: 'owner' },
      new Date(),
    )
    expect(elsewhere?.account_id).toBe(other)
    expect(
      await storage.users.create(
        { accountId: ACCOUNT, email: 'ann@example.test', role: 'member' },
        new Date(),
      ),
    ).toBeNull()
    expect(
      (await storage.users.findForSignIn('ann@example.test')).map((c) => c.user.account_id),
    ).toStrictEqual([ACCOUNT, other])
    // The reference from the links to the users still holds after the rebuild (SQLite) / constraint swap.
    expect(await storage.users.remove(ACCOUNT, user.user_id)).toBe('last_owner')
    await expect(
      storage.users.addSetPasswordLink('no-such-user', hashSecret('x'), Date.now()),
    ).rejects.toThrow()
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
