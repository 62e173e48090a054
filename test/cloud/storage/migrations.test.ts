import path from 'node:path'
import Database from 'better-sqlite3'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { openDatabase, schemaVersion } from '../../../cloud/storage/database.ts'
import { MIGRATIONS } from '../../../cloud/storage/migrations.ts'
import { openStorage } from '../../../cloud/storage/storage.ts'
import { tempDir } from '../../helpers/temp-dir.ts'

describe('SQLite storage', () => {
  let dir = tempDir()
  beforeEach(() => {
    dir = tempDir()
  })
  afterEach(() => dir.remove())

  it('creates a WAL database at the newest schema version', () => {
    const db = openDatabase(path.join(dir.path, 'fresh.sqlite'))
    expect(db.pragma('journal_mode', { simple: true })).toBe('wal')
    expect(schemaVersion(db)).toBe(MIGRATIONS.at(-1)?.version)
    db.close()
  })

  it('upgrades an older database in place and keeps its data', () => {
    const file = path.join(dir.path, 'cloud.sqlite')
    const old = openDatabase(file, 1)
    expect(schemaVersion(old)).toBe(1)
    old
      .prepare('INSERT INTO accounts (account_id, name, created_at) VALUES (?, ?, ?)')
      .run('00000000-0000-4000-8000-000000000001', 'Old shop', '2026-01-01T00:00:00.000Z')
    old.close()

    const storage = openStorage(dir.path)
    expect(storage.accounts.findById('00000000-0000-4000-8000-000000000001')?.name).toBe('Old shop')
    const agent = storage.agents.insert({ account_id: '00000000-0000-4000-8000-000000000001', name: 'hub' })
    expect(agent.agent_id).toMatch(/^[0-9a-f-]{36}$/)
    storage.close()

    const reopened = new Database(file)
    expect(reopened.pragma('user_version', { simple: true })).toBe(MIGRATIONS.at(-1)?.version)
    const tables = reopened
      .prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
      .pluck()
      .all()
    expect(tables).toEqual(expect.arrayContaining(['accounts', 'agents', 'print_jobs', 'idempotency_keys']))
    reopened.close()
  })

  it('refuses a database from a newer program', () => {
    const file = path.join(dir.path, 'newer.sqlite')
    const db = new Database(file)
    db.pragma('user_version = 999')
    db.close()
    expect(() => openDatabase(file)).toThrow('database schema version 999 is newer than this program knows')
  })
})
