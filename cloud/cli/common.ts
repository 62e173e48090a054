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

/** Runs `run` on the cloud's database (DATABASE_URL, or the SQLite file in DATA_DIR), which a running cloud may use. */
export async function withStorage<T>(run: (storage: Storage) => Promise<T>): Promise<T> {
  const config = loadConfig()
  const storage = await openStorage({
    dataDir: config.dataDir,
    databaseUrl: config.databaseUrl,
    busyTimeoutMs: config.databaseBusyTimeoutMs,
  })
  try {
    return await run(storage)
  } finally {
    await storage.close()
  }
}
