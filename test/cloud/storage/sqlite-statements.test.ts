import path from 'node:path'
import { CompiledQuery, Kysely, SqliteDialect } from 'kysely'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { openSqliteFile } from '../../../cloud/storage/database.ts'
import { withStatementCache } from '../../../cloud/storage/sqlite-statements.ts'
import { tempDir } from '../../helpers/temp-dir.ts'

describe('SQLite statement cache', () => {
  const cleanups: (() => unknown)[] = []
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
  })

  function open(size?: number) {
    const dir = tempDir()
    cleanups.push(() => dir.remove())
    const sqlite = openSqliteFile(path.join(dir.path, 'cache.sqlite'))
    sqlite.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT NOT NULL)')
    const prepare = vi.spyOn(sqlite, 'prepare')
    // biome-ignore lint/suspicious/noExplicitAny: a table the schema does not name
    const db = new Kysely<any>({ dialect: new SqliteDialect({ database: withStatementCache(sqlite, size) }) })
    cleanups.push(() => db.destroy())
    return { db, prepare }
  }

  it('prepares each SQL text once and runs it again with new values', async () => {
    const { db, prepare } = open()
    for (const [id, name] of [
      [1, 'a'],
      [2, 'b'],
      [3, 'c'],
    ] as const)
      await db.insertInto('t').values({ id, name }).execute()
    for (const id of [1, 2, 3]) {
      const row = await db.selectFrom('t').select('name').where('id', '=', id).executeTakeFirst()
      expect(row?.name).toBe(['a', 'b', 'c'][id - 1])
    }
    const updated = await db.updateTable('t').set({ name: 'z' }).where('id', '>', 1).executeTakeFirst()
    expect(updated.numUpdatedRows).toBe(2n)
    expect(await db.selectFrom('t').select('name').orderBy('id').execute()).toEqual([
      { name: 'a' },
      { name: 'z' },
      { name: 'z' },
    ])
    // One insert, one select by id, one update, one ordered select.
    expect(prepare).toHaveBeenCalledTimes(4)
  })

  it('keeps the most recently used statements when full', async () => {
    const { db, prepare } = open(2)
    const run = (text: string) => db.executeQuery(CompiledQuery.raw(text))
    await run('SELECT 1')
    await run('SELECT 2')
    await run('SELECT 1')
    await run('SELECT 3') // evicts SELECT 2, the least recently used
    await run('SELECT 1')
    expect(prepare).toHaveBeenCalledTimes(3)
    await run('SELECT 2')
    expect(prepare).toHaveBeenCalledTimes(4)
  })

  it('runs a transaction rolled back and one committed through the cached statements', async () => {
    const { db } = open()
    await expect(
      db.transaction().execute(async (tx) => {
        await tx.insertInto('t').values({ id: 1, name: 'gone' }).execute()
        throw new Error('abandoned')
      }),
    ).rejects.toThrow('abandoned')
    await db.transaction().execute((tx) => tx.insertInto('t').values({ id: 1, name: 'kept' }).execute())
    expect(await db.selectFrom('t').selectAll().execute()).toEqual([{ id: 1, name: 'kept' }])
  })
})
