import type Database from 'better-sqlite3'
import type { SqliteDatabase as SqliteDialectDatabase } from 'kysely'

/** Prepared statements kept per SQL text: at most this many (a multi-row insert compiles to a text per size). */
export const STATEMENT_CACHE_SIZE = 256

/**
 * The database as Kysely's driver sees it, with each SQL text prepared once: the driver prepares every query
 * it runs, which was 12 % of a node's time creating jobs (test/bench/api-create-jobs.ts). The least recently
 * used statement goes when the cache is full. A statement is reused only once its previous run has finished
 * (every query here runs to completion; Kysely's streaming, which would hold a statement open, is not used).
 */
export function withStatementCache(
  database: Database.Database,
  size = STATEMENT_CACHE_SIZE,
): SqliteDialectDatabase {
  const statements = new Map<string, Database.Statement>()
  return {
    close: () => database.close(),
    prepare(sql) {
      let statement = statements.get(sql)
      if (statement) statements.delete(sql)
      else {
        statement = database.prepare(sql)
        if (statements.size >= size) statements.delete(statements.keys().next().value as string)
      }
      statements.set(sql, statement)
      return statement
    },
  }
}
