import Database from 'better-sqlite3'
import { MIGRATIONS, type Migration } from './migrations.ts'

export type SqliteDatabase = Database.Database

export const DEFAULT_BUSY_TIMEOUT_MS = 5000

/**
 * Opens (creating if needed) a SQLite file in WAL mode and brings its schema up to `targetVersion`. A write
 * that finds the database locked waits up to `busyTimeoutMs`, then fails with SQLITE_BUSY.
 */
export function openDatabase(
  file: string,
  targetVersion?: number,
  busyTimeoutMs = DEFAULT_BUSY_TIMEOUT_MS,
): SqliteDatabase {
  const db = new Database(file)
  db.pragma('journal_mode = WAL')
  db.pragma('synchronous = NORMAL')
  db.pragma('foreign_keys = ON')
  db.pragma(`busy_timeout = ${Math.trunc(busyTimeoutMs)}`)
  migrate(db, MIGRATIONS, targetVersion)
  return db
}

export function schemaVersion(db: SqliteDatabase): number {
  return db.pragma('user_version', { simple: true }) as number
}

export function migrate(db: SqliteDatabase, migrations: readonly Migration[], targetVersion?: number): void {
  const target = targetVersion ?? Math.max(0, ...migrations.map((m) => m.version))
  const current = schemaVersion(db)
  if (current > Math.max(0, ...migrations.map((m) => m.version))) {
    throw new Error(
      `database schema version ${current} is newer than this program knows; upgrade the program`,
    )
  }
  for (const migration of migrations) {
    if (migration.version <= current || migration.version > target) continue
    db.transaction(() => {
      db.exec(migration.sql)
      db.pragma(`user_version = ${migration.version}`)
    }).immediate()
  }
}
