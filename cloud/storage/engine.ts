import type { Kysely, SelectQueryBuilder } from 'kysely'
import type { Database } from './schema.ts'

/** The database engines storage runs on: SQLite embedded (the default), PostgreSQL with DATABASE_URL. */
export type Engine = 'sqlite' | 'postgres'

/**
 * What every repository is built on: the query builder, and which engine is behind it for the few places
 * where they differ (row locks). `db` may be a transaction: then every query runs in it.
 */
export interface Sql {
  db: Kysely<Database>
  engine: Engine
}

/**
 * Runs `work` in one transaction: the ambient one when `sql` is already a transaction (Storage.atomically),
 * otherwise a new one (on SQLite `BEGIN IMMEDIATE`, see database.ts).
 */
export function inTransaction<T>(sql: Sql, work: (tx: Sql) => Promise<T>): Promise<T> {
  if (sql.db.isTransaction) return work(sql)
  return sql.db.transaction().execute((tx) => work({ db: tx, engine: sql.engine }))
}

/**
 * Locks the selected rows until the transaction ends (`FOR UPDATE`) on PostgreSQL, where writers run side
 * by side. SQLite needs none: a write transaction holds the whole database from its start (BEGIN IMMEDIATE).
 */
export function forUpdate<DB, TB extends keyof DB, O>(
  sql: Sql,
  query: SelectQueryBuilder<DB, TB, O>,
): SelectQueryBuilder<DB, TB, O> {
  return sql.engine === 'postgres' ? query.forUpdate() : query
}

/** Rows an UPDATE or DELETE changed, as a number. */
export function affected(result: { numUpdatedRows: bigint } | { numDeletedRows: bigint }): number {
  return Number('numUpdatedRows' in result ? result.numUpdatedRows : result.numDeletedRows)
}
