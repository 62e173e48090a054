import type Database from 'better-sqlite3'

/**
 * Versioned migrations of the hub's spool (docs/hub-updates.md: the spool across releases). The version is
 * SQLite's `PRAGMA user_version`; opening a spool applies every later migration in order, in one
 * transaction, so a release that changes the spool upgrades it in place.
 *
 * Every migration is additive, because a hub rolls back to the previous release without undoing anything: new
 * tables, new indexes, new columns that are NULL or have a DEFAULT. Never drop, rename or give another
 * meaning to a table or column, and never require a value an older release would not write. Then an older
 * release opening a newer spool (after a rollback) works as it always did: it leaves the version alone,
 * ignores what it does not know, and its inserts still satisfy the newer schema.
 */
export interface SpoolMigration {
  version: number
  name: string
  sql: string
}

export const SPOOL_MIGRATIONS: readonly SpoolMigration[] = [
  {
    version: 1,
    name: 'jobs, drop requests and the outbox',
    // IF NOT EXISTS: spools written before migrations existed (user_version 0) already hold these tables.
    sql: `
      CREATE TABLE IF NOT EXISTS jobs (
        print_job_id TEXT PRIMARY KEY,
        printer_key TEXT NOT NULL,
        offer TEXT NOT NULL,
        state TEXT NOT NULL,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        failure_reason TEXT
      );
      CREATE INDEX IF NOT EXISTS jobs_queued ON jobs(printer_key, state, created_at);
      CREATE TABLE IF NOT EXISTS dropped (
        print_job_id TEXT PRIMARY KEY,
        reason TEXT NOT NULL,
        at TEXT NOT NULL
      );
      CREATE TABLE IF NOT EXISTS outbox (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        topic TEXT NOT NULL,
        payload TEXT NOT NULL
      );
    `,
  },
  {
    version: 2,
    name: 'jobs taken on the LAN, the Idempotency-Keys of every job, LAN documents, and when a job moved',
    // docs/lan-printing.md. origin 'lan': taken on the hub's LAN API; `lan` holds what the cloud is told of it
    // besides the offer. `duplicate_of`: a cloud offer dropped because its key was taken on the LAN by that
    // job. An older release ignores these and would report a LAN job's status as for a cloud job, which the
    // cloud ignores for a job it does not know (the job stays as the last LAN report said). `taken_at`,
    // `started_at`, `completed_at`, `failure_detail`: what the LAN API shows of a job.
    sql: `
      ALTER TABLE jobs ADD COLUMN origin TEXT NOT NULL DEFAULT 'cloud';
      ALTER TABLE jobs ADD COLUMN lan TEXT;
      ALTER TABLE jobs ADD COLUMN duplicate_of TEXT;
      ALTER TABLE jobs ADD COLUMN taken_at TEXT;
      ALTER TABLE jobs ADD COLUMN started_at TEXT;
      ALTER TABLE jobs ADD COLUMN completed_at TEXT;
      ALTER TABLE jobs ADD COLUMN failure_detail TEXT;
      CREATE TABLE idempotency (
        endpoint TEXT NOT NULL,
        key TEXT NOT NULL,
        fingerprint TEXT NOT NULL,
        print_job_id TEXT NOT NULL,
        at TEXT NOT NULL,
        PRIMARY KEY (endpoint, key)
      );
      CREATE TABLE documents (
        document_id TEXT PRIMARY KEY,
        sha256 TEXT NOT NULL,
        size_bytes INTEGER NOT NULL,
        format TEXT NOT NULL,
        raw_language TEXT,
        mime_type TEXT NOT NULL,
        filename TEXT,
        created_at TEXT NOT NULL
      );
    `,
  },
]

/** What opening the spool did: the version found, the version now, and whether a newer release wrote it. */
export interface SpoolVersion {
  found: number
  now: number
  /** The spool was migrated by a newer release than this one (this hub was rolled back). */
  newer: boolean
}

/**
 * Brings the spool to the newest migration this release knows. A spool already past it is left as it is
 * (see above for why that is safe). Runs under BEGIN IMMEDIATE: one writer at a time.
 */
export function migrateSpool(
  db: Database.Database,
  migrations: readonly SpoolMigration[] = SPOOL_MIGRATIONS,
): SpoolVersion {
  return db
    .transaction((): SpoolVersion => {
      const found = db.pragma('user_version', { simple: true }) as number
      const latest = migrations.at(-1)?.version ?? 0
      if (found >= latest) return { found, now: found, newer: found > latest }
      for (const migration of migrations) {
        if (migration.version <= found) continue
        db.exec(migration.sql)
        // PRAGMA takes no bound parameters; the version is a number from the list above.
        db.pragma(`user_version = ${Math.trunc(migration.version)}`)
      }
      return { found, now: latest, newer: false }
    })
    .immediate()
}
