import Database from 'better-sqlite3'
import {
  CompiledQuery,
  type DatabaseConnection,
  Kysely,
  PostgresDialect,
  SqliteDialect,
  type SqliteDatabase as SqliteDialectDatabase,
  SqliteDriver,
} from 'kysely'
import pg from 'pg'
import type { Engine, Sql } from './engine.ts'
import { MIGRATIONS, type Migration, migrationSql } from './migrations.ts'
import { preparingPool } from './postgres-prepared.ts'
import type { Database as Schema } from './schema.ts'
import { withStatementCache } from './sqlite-statements.ts'
import { walCheckpointsInBackground } from './wal-checkpointer.ts'

export type SqliteDatabase = Database.Database

export const DEFAULT_BUSY_TIMEOUT_MS = 5000

/** Where the database is: a SQLite file (embedded default) or a PostgreSQL URL (DATABASE_URL). */
export type DatabaseLocation = { sqliteFile: string } | { postgresUrl: string }

export interface OpenDatabaseOptions {
  /** The schema version to bring the database to; the newest by default (tests pick older ones). */
  targetVersion?: number
  /** SQLite: how long a write waits for a database another process is writing. */
  busyTimeoutMs?: number
  /** The migrations to apply; tests pass their own. */
  migrations?: readonly Migration[]
}

/** An open database: its query builder, its engine, and how to close it. */
export interface OpenDatabase extends Sql {
  /** PostgreSQL only: its pool's connections now. */
  poolStats?(): PoolStats
  close(): Promise<void>
}

/** A PostgreSQL pool's connections: all it holds, those idle, and the queries waiting for one. */
export interface PoolStats {
  total: number
  idle: number
  waiting: number
}

/**
 * Opens the database and brings its schema up to date (see migrations.ts), under the engine's write lock so
 * that two nodes starting together apply each migration once.
 */
export async function openDatabase(
  location: DatabaseLocation,
  options: OpenDatabaseOptions = {},
): Promise<OpenDatabase> {
  if ('sqliteFile' in location) {
    const sqlite = openSqliteFile(location.sqliteFile, options.busyTimeoutMs)
    try {
      migrateSqlite(sqlite, options.migrations ?? MIGRATIONS, options.targetVersion)
    } catch (error) {
      sqlite.close()
      throw error
    }
    const db = new Kysely<Schema>({ dialect: new ImmediateSqliteDialect(sqlite) })
    const checkpoints = walCheckpointsInBackground(location.sqliteFile, sqlite)
    const close = async () => {
      await checkpoints.stop()
      await db.destroy()
    }
    return { db, engine: 'sqlite', close }
  }
  const pool = createPostgresPool(location.postgresUrl)
  try {
    await migratePostgres(pool, options.migrations ?? MIGRATIONS, options.targetVersion)
  } catch (error) {
    await pool.end()
    throw error
  }
  const db = new Kysely<Schema>({ dialect: new PostgresDialect({ pool: preparingPool(pool) }) })
  const close = async () => {
    await db.destroy()
    // Kysely ends the pool only once it has run a query; the migration's connection waits in it either way.
    if (!pool.ending) await pool.end()
  }
  const poolStats = () => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount })
  return { db, engine: 'postgres', poolStats, close }
}

/** A SQLite file in WAL mode; a write that finds the database locked waits up to `busyTimeoutMs`. */
export function openSqliteFile(file: string, busyTimeoutMs = DEFAULT_BUSY_TIMEOUT_MS): SqliteDatabase {
  const db = new Database(file)
  try {
    db.pragma('journal_mode = WAL')
    db.pragma('synchronous = NORMAL')
    db.pragma('foreign_keys = ON')
    db.pragma(`busy_timeout = ${Math.trunc(busyTimeoutMs)}`)
  } catch (error) {
    db.close()
    throw error
  }
  return db
}

/**
 * PostgreSQL's int8 (BIGINT columns, `seq`, and what `count` returns) read as a JavaScript number rather than
 * pg's default string, for this pool's connections only, so repositories see the numbers SQLite gives. Every
 * such value stays below 2^53 (Number.MAX_SAFE_INTEGER): epoch milliseconds are near 2^41 until the year
 * 2248, byte counts are bounded by ACCOUNT_STORAGE_QUOTA_BYTES (at most 2^40), `seq` and counts by the rows
 * a database can hold, and catalog serials were JavaScript numbers when they were written.
 */
function int8AsNumber(): pg.TypeOverrides {
  const types = new pg.TypeOverrides()
  types.setTypeParser(pg.types.builtins.INT8, Number)
  return types
}

function createPostgresPool(url: string): pg.Pool {
  const pool = new pg.Pool({ connectionString: url, types: int8AsNumber() })
  // An idle connection that breaks (the server restarted) is dropped by the pool; it must not crash the process.
  pool.on('error', () => {})
  return pool
}

function newestVersion(migrations: readonly Migration[]): number {
  return Math.max(0, ...migrations.map((m) => m.version))
}

function tooNew(current: number): Error {
  return new Error(`database schema version ${current} is newer than this program knows; upgrade the program`)
}

/** SQLite's schema version (`PRAGMA user_version`). */
export function sqliteSchemaVersion(db: SqliteDatabase): number {
  return db.pragma('user_version', { simple: true }) as number
}

/**
 * Applies the migrations after the file's version, all in one `BEGIN IMMEDIATE` transaction: the version is
 * read under SQLite's write lock, so a second process starting at the same moment waits, then finds nothing
 * left to do.
 */
export function migrateSqlite(
  db: SqliteDatabase,
  migrations: readonly Migration[],
  targetVersion?: number,
): void {
  const target = targetVersion ?? newestVersion(migrations)
  db.transaction(() => {
    const current = sqliteSchemaVersion(db)
    if (current > newestVersion(migrations)) throw tooNew(current)
    for (const migration of migrations) {
      if (migration.version <= current || migration.version > target) continue
      db.exec(migrationSql(migration, 'sqlite'))
      db.pragma(`user_version = ${migration.version}`)
    }
  }).immediate()
}

/**
 * A fixed key for `pg_advisory_xact_lock`: every node migrating the same database takes the same lock, held
 * until its migration transaction ends.
 */
const MIGRATION_LOCK_KEY = 0x7072696e // "prin"

/**
 * Applies the migrations after the database's version in one transaction that first takes an advisory lock,
 * so a second node starting at the same moment waits for the first to commit, then reads the new version and
 * finds nothing left to do. PostgreSQL's DDL is transactional: a failed migration leaves nothing behind.
 */
export async function migratePostgres(
  pool: pg.Pool,
  migrations: readonly Migration[],
  targetVersion?: number,
): Promise<void> {
  const target = targetVersion ?? newestVersion(migrations)
  const client = await pool.connect()
  try {
    await client.query('BEGIN')
    try {
      await client.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK_KEY])
      await client.query('CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)')
      const row = (await client.query<{ version: number }>('SELECT version FROM schema_version')).rows[0]
      if (!row) await client.query('INSERT INTO schema_version (version) VALUES (0)')
      const current = row?.version ?? 0
      if (current > newestVersion(migrations)) throw tooNew(current)
      let version = current
      for (const migration of migrations) {
        if (migration.version <= current || migration.version > target) continue
        // No parameters: the simple query protocol runs every statement of the migration.
        await client.query(migrationSql(migration, 'postgres'))
        version = migration.version
      }
      if (version !== current) await client.query('UPDATE schema_version SET version = $1', [version])
      await client.query('COMMIT')
    } catch (error) {
      await client.query('ROLLBACK').catch(() => {})
      throw error
    }
  } finally {
    client.release()
  }
}

/** The schema version of an open database. */
export async function schemaVersion(sql: Sql): Promise<number> {
  if (sql.engine === 'sqlite') {
    const { rows } = await sql.db.executeQuery<{ user_version: number }>(
      CompiledQuery.raw('PRAGMA user_version'),
    )
    return rows[0]?.user_version ?? 0
  }
  const { rows } = await sql.db.executeQuery<{ version: number }>(
    CompiledQuery.raw('SELECT version FROM schema_version'),
  )
  return rows[0]?.version ?? 0
}

/**
 * Kysely's SQLite dialect with write transactions that begin `IMMEDIATE`: the transaction takes SQLite's
 * write lock at its start (waiting up to busy_timeout for another process), so a read-then-write in it cannot
 * fail half-way with SQLITE_BUSY when another process (the CLI) wrote in between.
 */
class ImmediateSqliteDialect extends SqliteDialect {
  readonly #database: SqliteDialectDatabase
  constructor(database: SqliteDatabase) {
    const cached = withStatementCache(database)
    super({ database: cached })
    this.#database = cached
  }
  override createDriver() {
    return new ImmediateSqliteDriver({ database: this.#database })
  }
}

class ImmediateSqliteDriver extends SqliteDriver {
  override async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('begin immediate'))
  }
}

export type { Engine }
