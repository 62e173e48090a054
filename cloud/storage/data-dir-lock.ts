import path from 'node:path'
import Database from 'better-sqlite3'

export const LOCK_FILE = 'cloud.lock'

/** Another running cloud holds DATA_DIR's lock. */
export class DataDirInUseError extends Error {
  readonly setting = 'DATA_DIR'
  constructor(dataDir: string) {
    super(
      `DATA_DIR: ${dataDir} is in use by another running cloud; stop it or set DATA_DIR to another directory`,
    )
    this.name = 'DataDirInUseError'
  }
}

export interface DataDirLock {
  release(): void
}

/**
 * Makes this process the only cloud serving `dataDir` for as long as it runs. The lock is SQLite's own
 * exclusive lock on a file of its own (`cloud.lock`), held by a connection in exclusive locking mode: the
 * operating system drops it when the process ends however it ends, so a dead cloud's lock is never stale.
 * The database itself is not locked: the CLI's admin commands keep working while the cloud runs.
 */
export function lockDataDir(dataDir: string): DataDirLock {
  const db = new Database(path.join(dataDir, LOCK_FILE))
  try {
    db.pragma('busy_timeout = 0')
    db.pragma('locking_mode = EXCLUSIVE')
    // The first write takes the exclusive lock; in exclusive locking mode it is kept until close.
    db.exec('BEGIN EXCLUSIVE; CREATE TABLE IF NOT EXISTS holder (pid INTEGER); COMMIT')
  } catch (error) {
    db.close()
    if ((error as { code?: string }).code?.startsWith('SQLITE_BUSY')) throw new DataDirInUseError(dataDir)
    throw error
  }
  return { release: () => db.close() }
}
