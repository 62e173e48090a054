import type { ChildProcess } from 'node:child_process'
import { cloudCommand, exitOf, hasExited, spawnCli, waitForLogLine } from '../helpers/cli.ts'
import { freePort } from '../helpers/free-port.ts'
import { tempDir } from '../helpers/temp-dir.ts'

/**
 * Real processes for end-to-end tests: the cloud (`cloud serve`) and hubs (`hub run`), each started through
 * its CLI exactly as an operator would, on loopback ports. Everything started here is stopped by `stopAll`.
 */
export interface CloudProcess {
  url: string
  dataDir: string
  port: number
  mqttPort: number
  process: ChildProcess
  logs: string[]
  /**
   * A cloud CLI command (`account create`, ...) on this cloud's database, run in this process through the
   * CLI's own code: what the CLI would print. The CLI opens the database itself while the cloud runs, and so
   * does this.
   */
  admin(args: string[]): Promise<Record<string, string>>
  stop(): Promise<number | null>
  kill(): Promise<void>
}

export interface HubProcess {
  dataDir: string
  process: ChildProcess
  logs: string[]
  agentId: string
  stop(): Promise<number | null>
  kill(): Promise<void>
}

const running = new Set<ChildProcess>()
const hubs: HubProcess[] = []

/** Hubs started so far (the latest last). */
export function runningHubs(): HubProcess[] {
  return hubs.filter((hub) => !hasExited(hub.process))
}
const dirs: { remove(): void }[] = []

function collect(child: ChildProcess): string[] {
  const logs: string[] = []
  child.stdout?.on('data', (chunk: Buffer) => logs.push(chunk.toString('utf8')))
  child.stderr?.on('data', (chunk: Buffer) => logs.push(chunk.toString('utf8')))
  return logs
}

function tracked(child: ChildProcess) {
  running.add(child)
  child.once('exit', () => running.delete(child))
  return {
    async stop() {
      if (!hasExited(child)) child.kill('SIGTERM')
      return exitOf(child)
    },
    async kill() {
      if (!hasExited(child)) child.kill('SIGKILL')
      await exitOf(child)
    },
  }
}

export const FAST_HUB_ENV = {
  HUB_HEALTH_INTERVAL_MS: '500',
  HUB_STATUS_TIMEOUT_MS: '300',
  HUB_RECHECK_MS: '100',
  HUB_PAPER_WAIT_TIMEOUT_MS: '60000',
  HUB_UNREACHABLE_TIMEOUT_MS: '60000',
  LOG_LEVEL: 'info',
}

export async function startCloudProcess(
  options: {
    dataDir?: string
    port?: number
    mqttPort?: number
    env?: Record<string, string>
    /** Another entry that starts the same cloud (a benchmark's, with seams), instead of `cloud/cli.ts serve`. */
    script?: string
  } = {},
): Promise<CloudProcess> {
  let dataDir = options.dataDir
  if (!dataDir) {
    const dir = tempDir('e2e-cloud-')
    dirs.push(dir)
    dataDir = dir.path
  }
  const port = options.port ?? (await freePort())
  const mqttPort = options.mqttPort ?? (await freePort())
  const env = {
    DATA_DIR: dataDir,
    HOST: '127.0.0.1',
    PORT: String(port),
    MQTT_PORT: String(mqttPort),
    PUBLIC_URL: `http://127.0.0.1:${port}`,
    HUB_KEEPALIVE_SECONDS: '2',
    RATE_LIMIT_PER_IP: '1000000',
    RATE_LIMIT_PER_ACCOUNT: '1000000',
    ...options.env,
  }
  const child = options.script ? spawnCli(options.script, [], env) : spawnCli('cloud/cli.ts', ['serve'], env)
  const logs = collect(child)
  const control = tracked(child)
  await waitForLogLine(child, (line) => line.msg === 'cloud ready')
  const dir = dataDir
  return {
    url: `http://127.0.0.1:${port}`,
    dataDir: dir,
    port,
    mqttPort,
    process: child,
    logs,
    admin(args) {
      // The CLI reads the database the cloud uses: DATABASE_URL when it has one, else DATA_DIR's SQLite file;
      // links it prints (user create's set_password_url) are on the cloud's PUBLIC_URL.
      const databaseUrl = options.env?.DATABASE_URL
      const database: Record<string, string> = databaseUrl ? { DATABASE_URL: databaseUrl } : {}
      return cloudCommand(args, { DATA_DIR: dir, PUBLIC_URL: env.PUBLIC_URL, ...database })
    },
    stop: control.stop,
    kill: control.kill,
  }
}

export async function startHubProcess(options: {
  cloudUrl: string
  dataDir?: string
  enroll?: string
  printers: string[]
  env?: Record<string, string>
}): Promise<HubProcess> {
  let dataDir = options.dataDir
  if (!dataDir) {
    const dir = tempDir('e2e-hub-')
    dirs.push(dir)
    dataDir = dir.path
  }
  const args = ['run', '--cloud', options.cloudUrl, '--data', dataDir]
  if (options.enroll) args.push('--enroll', options.enroll)
  for (const printer of options.printers) args.push('--printer', printer)
  const child = spawnCli('hub/cli.ts', args, { ...FAST_HUB_ENV, ...options.env })
  const logs = collect(child)
  const control = tracked(child)
  const ready = await waitForLogLine(child, (line) => line.msg === 'hub ready')
  const hub = {
    dataDir,
    process: child,
    logs,
    agentId: String(ready.agent_id),
    stop: control.stop,
    kill: control.kill,
  }
  hubs.push(hub)
  return hub
}

/** Stops every process still running and removes the temp dirs. */
export async function stopAll(): Promise<void> {
  hubs.length = 0
  for (const child of running) child.kill('SIGKILL')
  await Promise.all([...running].map((child) => exitOf(child)))
  for (const dir of dirs.splice(0)) dir.remove()
}

export async function newTempDir(prefix: string): Promise<string> {
  const dir = tempDir(prefix)
  dirs.push(dir)
  return dir.path
}

/** An account, an API token with every scope, and an enrollment token, all through the cloud CLI's commands. */
export async function setUpAccount(cloud: CloudProcess, name = 'E2E shop') {
  const { account_id } = await cloud.admin(['account', 'create', '--name', name])
  const { client_id, client_secret } = await cloud.admin([
    'client',
    'create',
    '--account',
    account_id!,
    '--scopes',
    'printers:read,documents:write,print_jobs:write,print_jobs:read',
  ])
  const { token } = await cloud.admin([
    'enrollment',
    'create',
    '--account',
    account_id!,
    '--name',
    `${name} hub`,
  ])
  const accessToken = await clientToken(cloud, client_id!, client_secret!)
  return { accountId: account_id!, accessToken, enrollmentToken: token! }
}

/** An access token for an API client (OAuth client credentials, POST /oauth/token). */
export async function clientToken(
  cloud: CloudProcess,
  clientId: string,
  clientSecret: string,
): Promise<string> {
  const res = await fetch(`${cloud.url}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'client_credentials',
      client_id: clientId,
      client_secret: clientSecret,
    }),
  })
  const { access_token } = (await res.json()) as { access_token: string }
  return access_token
}
