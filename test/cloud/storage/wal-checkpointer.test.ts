import { statSync } from 'node:fs'
import path from 'node:path'
import { sql } from 'kysely'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { type OpenDatabase, openDatabase } from '../../../cloud/storage/database.ts'
import { tempDir } from '../../helpers/temp-dir.ts'

describe('WAL checkpoints on a worker thread (SQLite)', () => {
  let dir: ReturnType<typeof tempDir>
  let database: OpenDatabase
  let file: string
  beforeEach(async () => {
    dir = tempDir()
    file = path.join(dir.path, 'cloud.db')
    database = await openDatabase({ sqliteFile: file })
    await sql`CREATE TABLE filler (bytes BLOB NOT NULL)`.execute(database.db)
  })
  afterEach(async () => {
    await database.close()
    dir.remove()
  })

  const autocheckpoint = async () =>
    (await sql<{ wal_autocheckpoint: number }>`PRAGMA wal_autocheckpoint`.execute(database.db)).rows[0]
      ?.wal_autocheckpoint
  /** `pages` pages of rows, in one transaction. */
  const write = (pages: number) =>
    database.db.transaction().execute(async (tx) => {
      for (let page = 0; page < pages; page += 1)
        await sql`INSERT INTO filler (bytes) VALUES (${Buffer.alloc(4000, page % 251)})`.execute(tx)
    })
  const until = async (done: () => boolean | Promise<boolean>) => {
    const deadline = Date.now() + 10_000
    while (!(await done())) {
      if (Date.now() > deadline) throw new Error('timed out')
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
  }

  it('leaves a database that writes little alone', async () => {
    await write(10)
    await new Promise((resolve) => setTimeout(resolve, 1200))
    expect(await autocheckpoint()).toBe(1000)
  })

  it('once the WAL has grown, copies what is committed to the database without the writer', async () => {
    // Past 1,000 pages of WAL: the worker starts, and the cloud's connection checkpoints only past 10,000.
    await write(1200)
    await until(async () => (await autocheckpoint()) === 10_000)
    await until(() => statSync(file).size >= 1200 * 4096)
    const before = statSync(file).size

    // 500 pages: far under the connection's own threshold, so only the worker can move them to the file.
    await write(500)

    await until(() => statSync(file).size >= before + 500 * 4000)
  })
})
