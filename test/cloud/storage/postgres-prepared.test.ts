import { Kysely, PostgresDialect, sql } from 'kysely'
import pg from 'pg'
import { afterEach, describe, expect, it } from 'vitest'
import { preparingPool } from '../../../cloud/storage/postgres-prepared.ts'
import { testDatabases } from '../../helpers/postgres-server.ts'

// biome-ignore lint/suspicious/noExplicitAny: tables of this test only
type AnyDb = Kysely<any>

describe('PostgreSQL queries as named prepared statements', () => {
  const databases = testDatabases()
  const cleanups: (() => Promise<unknown>)[] = []
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
  })

  /** One connection, so that what it prepared is what pg_prepared_statements shows. */
  async function open(perConnection?: number): Promise<{ db: AnyDb; url: string }> {
    const url = await databases.empty()
    const pool = new pg.Pool({ connectionString: url, max: 1 })
    const db: AnyDb = new Kysely({
      dialect: new PostgresDialect({ pool: preparingPool(pool, perConnection) }),
    })
    cleanups.push(() => db.destroy())
    await sql`CREATE TABLE t (id integer PRIMARY KEY, name text NOT NULL)`.execute(db)
    return { db, url }
  }

  const preparedTexts = async (db: AnyDb) =>
    (
      await sql<{
        statement: string
      }>`SELECT statement FROM pg_prepared_statements ORDER BY statement`.execute(db)
    ).rows.map((row) => row.statement)

  it('prepares each SQL text once per connection and runs it again with new values', async () => {
    const { db } = await open()
    for (const [id, name] of [
      [1, 'a'],
      [2, 'b'],
      [3, 'c'],
    ] as const)
      await db.insertInto('t').values({ id, name }).execute()
    for (const id of [1, 2, 3])
      expect((await db.selectFrom('t').select('name').where('id', '=', id).executeTakeFirst())?.name).toBe(
        ['a', 'b', 'c'][id - 1],
      )
    const texts = await preparedTexts(db)
    expect(texts.filter((text) => text.startsWith('insert into "t"'))).toEqual([
      'insert into "t" ("id", "name") values ($1, $2)',
    ])
    expect(texts.filter((text) => text.startsWith('select "name" from "t"'))).toEqual([
      'select "name" from "t" where "id" = $1',
    ])
  })

  it('runs texts past its bound unnamed', async () => {
    const { db } = await open(3)
    // The CREATE TABLE of open() is the first named statement.
    await db.insertInto('t').values({ id: 1, name: 'a' }).execute()
    await db.selectFrom('t').select('name').execute()
    await db.selectFrom('t').select('id').execute()
    expect(await db.selectFrom('t').select(['id', 'name']).execute()).toEqual([{ id: 1, name: 'a' }])
    expect(await preparedTexts(db)).toEqual([
      'CREATE TABLE t (id integer PRIMARY KEY, name text NOT NULL)',
      'insert into "t" ("id", "name") values ($1, $2)',
      'select "name" from "t"',
    ])
  })

  it('answers a statement whose table another node altered, at once outside a transaction', async () => {
    const { db, url } = await open()
    await db.insertInto('t').values({ id: 1, name: 'a' }).execute()
    expect(await db.selectFrom('t').selectAll().execute()).toEqual([{ id: 1, name: 'a' }])
    await alter(url, 'ALTER TABLE t ADD COLUMN note text')
    expect(await db.selectFrom('t').selectAll().execute()).toEqual([{ id: 1, name: 'a', note: null }])
  })

  it('fails a transaction that meets an altered table once, and the retry succeeds', async () => {
    const { db, url } = await open()
    await db.insertInto('t').values({ id: 1, name: 'a' }).execute()
    const readAll = () => db.transaction().execute((tx) => tx.selectFrom('t').selectAll().execute())
    expect(await readAll()).toEqual([{ id: 1, name: 'a' }])
    await alter(url, 'ALTER TABLE t ADD COLUMN note text')
    await expect(readAll()).rejects.toMatchObject({ code: '0A000' })
    expect(await readAll()).toEqual([{ id: 1, name: 'a', note: null }])
  })
})

/** A migration as another node runs it: on a connection of its own. */
async function alter(url: string, statement: string): Promise<void> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    await client.query(statement)
  } finally {
    await client.end()
  }
}
