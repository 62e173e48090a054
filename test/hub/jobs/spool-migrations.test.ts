import path from 'node:path'
import Database from 'better-sqlite3'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { Spool } from '../../../hub/jobs/spool.ts'
import { SPOOL_MIGRATIONS, type SpoolMigration } from '../../../hub/jobs/spool-migrations.ts'
import { tempDir } from '../../helpers/temp-dir.ts'
import { offer, SPOOL_PRINTER as PRINTER } from './job-offers.ts'

/** This release's spool version, and the next release's. */
const LATEST = SPOOL_MIGRATIONS.at(-1)?.version ?? 0
const NEXT = LATEST + 1

/** What a later release might add: a column with a default and a table (additive, as the rules say). */
const NEXT_RELEASE: SpoolMigration[] = [
  ...SPOOL_MIGRATIONS,
  {
    version: NEXT,
    name: 'job priority and printer notes',
    sql: `
      ALTER TABLE jobs ADD COLUMN priority INTEGER NOT NULL DEFAULT 0;
      CREATE TABLE printer_notes (printer_key TEXT PRIMARY KEY, note TEXT NOT NULL);
    `,
  },
]

/** The schema the hub created before the spool had migrations (user_version 0). */
const UNVERSIONED_SCHEMA = `
  CREATE TABLE jobs (print_job_id TEXT PRIMARY KEY, printer_key TEXT NOT NULL, offer TEXT NOT NULL,
    state TEXT NOT NULL, created_at TEXT NOT NULL, updated_at TEXT NOT NULL, failure_reason TEXT);
  CREATE INDEX jobs_queued ON jobs(printer_key, state, created_at);
  CREATE TABLE dropped (print_job_id TEXT PRIMARY KEY, reason TEXT NOT NULL, at TEXT NOT NULL);
  CREATE TABLE outbox (seq INTEGER PRIMARY KEY AUTOINCREMENT, topic TEXT NOT NULL, payload TEXT NOT NULL);
`

describe('spool migrations (real SQLite files)', () => {
  let dir: ReturnType<typeof tempDir>
  let file: string
  const open: Spool[] = []
  const spoolOf = (migrations?: readonly SpoolMigration[]) => {
    const spool = new Spool(file, migrations)
    open.push(spool)
    return spool
  }
  const userVersion = () => {
    const db = new Database(file, { readonly: true })
    try {
      return db.pragma('user_version', { simple: true })
    } finally {
      db.close()
    }
  }
  beforeEach(() => {
    dir = tempDir('spool-migrations-')
    file = path.join(dir.path, 'spool.sqlite')
  })
  afterEach(() => {
    for (const spool of open.splice(0)) spool.close()
    dir.remove()
  })

  it('a new spool gets every migration and records the version', () => {
    const spool = spoolOf()
    expect(spool.version).toEqual({ found: 0, now: LATEST, newer: false })
    spool.close()
    expect(userVersion()).toBe(LATEST)
  })

  it('a spool from before migrations is adopted and migrated with its jobs', () => {
    const db = new Database(file)
    db.exec(UNVERSIONED_SCHEMA)
    db.prepare(`INSERT INTO jobs VALUES (?, ?, ?, 'queued', ?, ?, NULL)`).run(
      offer(1).print_job_id,
      PRINTER,
      JSON.stringify(offer(1)),
      offer(1).created_at,
      offer(1).created_at,
    )
    db.close()
    const spool = spoolOf()
    expect(spool.version).toEqual({ found: 0, now: LATEST, newer: false })
    expect(spool.next(PRINTER)?.print_job_id).toBe(offer(1).print_job_id)
  })

  it('a newer release upgrades the spool in place, keeping its jobs', () => {
    const old = spoolOf()
    old.accept(offer(1))
    old.close()
    const next = spoolOf(NEXT_RELEASE)
    expect(next.version).toEqual({ found: LATEST, now: NEXT, newer: false })
    expect(next.next(PRINTER)?.print_job_id).toBe(offer(1).print_job_id)
    next.close()
    expect(userVersion()).toBe(NEXT)
  })

  it('after a rollback the older release reads and writes the newer spool, which stays newer', () => {
    const next = spoolOf(NEXT_RELEASE)
    next.accept(offer(1))
    next.close()
    // The previous release (this one's migrations) opens what the newer one left.
    const rolledBack = spoolOf()
    expect(rolledBack.version).toEqual({ found: NEXT, now: NEXT, newer: true })
    expect(rolledBack.next(PRINTER)?.print_job_id).toBe(offer(1).print_job_id)
    expect(rolledBack.accept(offer(2))).toBe(true)
    expect(rolledBack.startPrinting(offer(1).print_job_id)).toBe(true)
    expect(rolledBack.finish(offer(1).print_job_id)).toBe(true)
    expect(rolledBack.outbox().map((m) => m.topic)).toEqual([
      'job-ack',
      'job-ack',
      'job-status',
      'job-status',
    ])
    rolledBack.close()
    expect(userVersion()).toBe(NEXT)
    // Updated again: nothing is migrated twice, and the older release's insert took the newer column's default.
    const again = spoolOf(NEXT_RELEASE)
    expect(again.version).toEqual({ found: NEXT, now: NEXT, newer: false })
    again.close()
    const db = new Database(file, { readonly: true })
    const rows = db.prepare('SELECT print_job_id, state, priority FROM jobs ORDER BY print_job_id').all()
    db.close()
    expect(rows).toEqual([
      { print_job_id: offer(1).print_job_id, state: 'printed', priority: 0 },
      { print_job_id: offer(2).print_job_id, state: 'queued', priority: 0 },
    ])
  })

  it('a migration that fails leaves the spool at the version it had, without half of the change', () => {
    spoolOf().close()
    const broken: SpoolMigration[] = [
      ...SPOOL_MIGRATIONS,
      {
        version: NEXT,
        name: 'broken',
        sql: 'CREATE TABLE extra (x TEXT); ALTER TABLE missing ADD COLUMN y TEXT;',
      },
    ]
    expect(() => new Spool(file, broken)).toThrow(/no such table: missing/)
    expect(userVersion()).toBe(LATEST)
    const db = new Database(file, { readonly: true })
    const tables = db.prepare(`SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'extra'`).all()
    db.close()
    expect(tables).toEqual([])
  })
})
