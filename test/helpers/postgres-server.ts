import { type ChildProcess, execFileSync, spawn } from 'node:child_process'
import { chownSync, existsSync, readdirSync, rmSync } from 'node:fs'
import path from 'node:path'
import pg from 'pg'
import { tempDir } from './temp-dir.ts'

/**
 * A throw-away PostgreSQL for tests: Debian's server binaries (`/usr/lib/postgresql/<version>/bin`), a
 * cluster made by initdb in a temporary directory, listening only on a Unix socket in that directory (no
 * TCP port at all), durability off (fsync, synchronous_commit) since nothing in it outlives the test file.
 * initdb and the server refuse to run as root, so as root (CI) both run as the `postgres` user, which
 * then owns the directory. `stop()` ends the server and removes the directory.
 */
export interface PostgresServer {
  /** The socket directory (also the cluster's parent directory). */
  dir: string
  /** The postmaster's; each connection is served by a child process of it. */
  pid: number
  /** A fresh, empty database; its URL (postgres://postgres@localhost/NAME?host=DIR). */
  createDatabase(): Promise<string>
  /** Ends the server (fast shutdown) and removes its directory; safe to call twice. */
  stop(): Promise<void>
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

let databases = 0

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
  let log = ''
  server.stderr?.on('data', (chunk: Buffer) => {
    log += chunk.toString()
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
  return {
    dir: dir.path,
    pid: server.pid ?? 0,
    async createDatabase() {
      databases += 1
      const name = `test_${process.pid}_${databases}`
      const client = new pg.Client({ connectionString: admin })
      await client.connect()
      try {
        await client.query(`CREATE DATABASE ${name}`)
      } finally {
        await client.end()
      }
      return `postgres://postgres@localhost/${name}?host=${encodeURIComponent(dir.path)}`
    },
    stop,
  }
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
