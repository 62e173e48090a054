import { loadConfig } from '../config.ts'
import { openStorage, type Storage } from '../storage/storage.ts'

/** A wrong command line: one line and the usage, exit 2. */
export class UsageError extends Error {}
/** The id names nothing: one line, exit 1. */
export class NotFoundError extends Error {}
/** The thing cannot be done now (a printer still online): one line, exit 1. */
export class RefusedError extends Error {}

/** A required string option. */
export function option(values: Record<string, unknown>, name: string): string {
  const value = values[name]
  if (typeof value !== 'string' || value.trim() === '') throw new UsageError(`--${name} is required`)
  return value
}

/** Runs `run` on the database in DATA_DIR, which may be in use by a running cloud. */
export function withStorage<T>(run: (storage: Storage) => T): T {
  const config = loadConfig()
  const storage = openStorage(config.dataDir, config.databaseBusyTimeoutMs)
  try {
    return run(storage)
  } finally {
    storage.close()
  }
}
