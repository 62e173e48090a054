import { type ChildProcess, execFileSync, spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { chownSync, existsSync, readdirSync, rmSync } from 'node:fs'
import path from 'node:path'
import pg from 'pg'
import { afterAll, inject } from 'vitest'
import { tempDir } from './temp-dir.ts'

/**
 * A throw-away PostgreSQL for tests: Debian's server binaries (`/usr/lib/postgresql/<version>/bin`), a
 * cluster made by initdb in a temporary directory, listening only on a Unix socket in that directory (no
 * TCP port at all), durability off (fsync, synchronous_commit) since nothing in it outlives the test run.
 * initdb and the server refuse to run as root, so as root (CI) both run as the `postgres` user, which
 * then owns the directory. `stop()` ends the server and removes the directory.
 *
 * A vitest run starts one (postgres-global.ts); its tests take databases on it with `testDatabases()`.
 */
export interface PostgresServer extends PostgresDatabases {
  /** The postmaster's; each connection is served by a child process of it. */
  pid: number
  /** Ends the server (fast shutdown) and removes its directory; safe to call twice. */
  stop(): Promise<void>
}

/** Databases on a server, made and dropped through its socket directory. */
export interface PostgresDatabases {
  /** The socket directory (also the cluster's parent directory). */
  dir: string
  /**
   * A fresh database, empty or, with `template`, a copy of that database (no session may be connected to
   * it meanwhile); its URL (postgres://postgres@localhost/NAME?host=DIR). Named `name` or a random name.
   */
  createDatabase(options?: { template?: string; name?: string }): Promise<string>
  /** Drops the database of `url`, ending any connection still open to it; nothing if it is gone. */
  dropDatabase(url: string): Promise<void>
  /** Runs SQL on the server's `postgres` database (CREATE/ALTER/DROP DATABASE). */
  admin(statement: string): Promise<void>
}

/**
 * The database the run's server (postgres-global.ts) migrates once to the newest schema; `migrated()`
 * databases are copies of it. It takes no connections, so a copy never waits for (or fails on) a session in it.
 */
export const MIGRATED_TEMPLATE = 'print_hub_template'

declare module 'vitest' {
  export interface ProvidedContext {
    /** The socket directory of the run's PostgreSQL server (postgres-global.ts). */
    postgresDir: string
  }
}

/** The directory of the newest PostgreSQL server binaries, or undefined when none is installed. */
export function postgresBinDir(): string | undefined {
  if (process.env.PG_BINDIR) return process.env.PG_BINDIR
  const root = '/usr/lib/postgresql'
  if (!existsSync(root)) return undefined
  const versions = readdirSync(root)
    .filter((name) => existsSync(path.join(root, name, 'bin', 'postgres')))
    .sort((a, b) => Number(b) - Number(a))
  return versions[0] === undefined ? undefined : path.join(root, versions[0], 'bin')
}

/** Who runs the server: ourselves, or the `postgres` user when we are root. */
function serverUser(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined
  const id = (flag: string) => Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' }).trim())
  return { uid: id('-u'), gid: id('-g') }
}

/** Server settings beyond the defaults below, each passed as `-c name=value`. */
export type PostgresSettings = Record<string, string>

export async function startPostgres(settings: PostgresSettings = {}): Promise<PostgresServer> {
  const bin = postgresBinDir()
  if (!bin)
    throw new Error('no PostgreSQL server binaries under /usr/lib/postgresql (apt-get install postgresql)')
  // A short path: a Unix socket's path may not pass 107 bytes.
  const dir = tempDir('pg-')
  const user = serverUser()
  if (user) chownSync(dir.path, user.uid, user.gid)
  const as = user ? { uid: user.uid, gid: user.gid } : {}
  const data = path.join(dir.path, 'data')
  try {
    execFileSync(
      path.join(bin, 'initdb'),
      [
        '-D',
        data,
        '-U',
        'postgres',
        '--auth=trust',
        '-E',
        'UTF8',
        '--locale=C',
        '--no-sync',
        '--no-instructions',
      ],
      { ...as, stdio: 'pipe', cwd: dir.path },
    )
  } catch (error) {
    dir.remove()
    throw new Error(`initdb failed: ${(error as { stderr?: Buffer }).stderr?.toString() ?? error}`)
  }
  const server = spawn(
    path.join(bin, 'postgres'),
    [
      '-D',
      data,
      '-k',
      dir.path,
      '-c',
      'listen_addresses=',
      '-c',
      'fsync=off',
      '-c',
      'synchronous_commit=off',
      '-c',
      'full_page_writes=off',
      '-c',
      'max_connections=200',
      ...Object.entries(settings).flatMap(([name, value]) => ['-c', `${name}=${value}`]),
    ],
    { ...as, stdio: ['ignore', 'ignore', 'pipe'], cwd: dir.path },
  )
  // Its last messages, for an error at start; a server for a whole run logs on (each failed statement).
  let log = ''
  server.stderr?.on('data', (chunk: Buffer) => {
    log = (log + chunk.toString()).slice(-20_000)
  })
  const exited = new Promise<void>((resolve) => server.once('exit', () => resolve()))
  const stop = async () => {
    if (server.exitCode === null && server.signalCode === null) {
      server.kill('SIGINT') // fast shutdown: rolls back open transactions, ends every connection
      await exited
    }
    rmSync(dir.path, { recursive: true, force: true })
  }
  const admin = `postgres://postgres@localhost/postgres?host=${encodeURIComponent(dir.path)}`
  try {
    await ready(admin, server, () => log)
  } catch (error) {
    await stop()
    throw error
  }
  return { ...postgresDatabases(dir.path), pid: server.pid ?? 0, stop }
}

/** Databases on the server whose socket is in `dir`, each made or dropped on a connection of its own. */
function postgresDatabases(dir: string): PostgresDatabases {
  const host = `?host=${encodeURIComponent(dir)}`
  const onAdmin = async <T>(work: (client: pg.Client) => Promise<T>): Promise<T> => {
    const client = new pg.Client({ connectionString: `postgres://postgres@localhost/postgres${host}` })
    await client.connect()
    try {
      return await work(client)
    } finally {
      await client.end()
    }
  }
  const admin = async (statement: string) => {
    await onAdmin((client) => client.query(statement))
  }
  return {
    dir,
    admin,
    async createDatabase({ template, name = `test_${randomBytes(6).toString('hex')}` } = {}) {
      await admin(`CREATE DATABASE ${name}${template ? ` TEMPLATE ${template}` : ''}`)
      return `postgres://postgres@localhost/${name}${host}`
    },
    async dropDatabase(url) {
      const name = new URL(url).pathname.slice(1)
      await onAdmin(async (client) => {
        // A backend lives a moment after its client ended; ended by FORCE meanwhile, it sends that client an
        // error (57P01) the client may not listen for. Give such backends up to a second; FORCE ends the rest.
        const sessions = async () =>
          (
            await client.query<{ n: number }>(
              'SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1',
              [name],
            )
          ).rows[0]?.n
        for (let tries = 0; tries < 50 && (await sessions()); tries++)
          await new Promise((resolve) => setTimeout(resolve, 20))
        await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
      })
    },
  }
}

/**
 * Databases on the run's one PostgreSQL server (started by postgres-global.ts, vitest's globalSetup) for the
 * tests of one describe block: each has a random name, so test files in parallel workers never meet, and is
 * dropped after the block's last test. Called first in the block, the drop also comes after the block's own
 * afterAll hooks (vitest runs after-hooks last-registered first); a connection still open is ended.
 */
export function testDatabases(): {
  /** A fresh database at the newest schema: a copy of MIGRATED_TEMPLATE (opening it migrates nothing). */
  migrated(): Promise<string>
  /** A fresh, empty database: for tests of the migrations themselves and of tables of their own. */
  empty(): Promise<string>
} {
  const made: string[] = []
  let server: PostgresDatabases | undefined
  const create = async (options: { template?: string }) => {
    server ??= postgresDatabases(runServerDir())
    const url = await server.createDatabase(options)
    made.push(url)
    return url
  }
  afterAll(async () => {
    for (const url of made.splice(0)) await server?.dropDatabase(url)
  })
  return { migrated: () => create({ template: MIGRATED_TEMPLATE }), empty: () => create({}) }
}

function runServerDir(): string {
  const dir = inject('postgresDir')
  if (!dir)
    throw new Error(
      'no PostgreSQL server for this run: vitest.config.ts must list test/helpers/postgres-global.ts in globalSetup',
    )
  return dir
}

/** Waits until the server takes connections (or fails with what it logged). */
async function ready(url: string, server: ChildProcess, log: () => string): Promise<void> {
  const deadline = Date.now() + 20_000
  for (;;) {
    if (server.exitCode !== null) throw new Error(`postgres exited: ${log()}`)
    const client = new pg.Client({ connectionString: url })
    try {
      await client.connect()
      await client.end()
      return
    } catch {
      await client.end().catch(() => {})
      if (Date.now() > deadline) throw new Error(`postgres did not start in time: ${log()}`)
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
  }
}
