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

/**
 * The environment a command takes its settings from: the process's for the CLI; a cloud's own for a test that
 * sets up its data in-process through the same commands.
 */
export type Environment = Record<string, string | undefined>

/** A command (`account create`, ...): its arguments after the command's words → the JSON object it prints. */
export type Command = (args: string[], env: Environment) => Promise<object>

/** Runs `run` on the cloud's database (DATABASE_URL, or the SQLite file in DATA_DIR), which a running cloud may use. */
export async function withStorage<T>(env: Environment, run: (storage: Storage) => Promise<T>): Promise<T> {
  const config = loadConfig(env)
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
