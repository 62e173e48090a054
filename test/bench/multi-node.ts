import { execFileSync } from 'node:child_process'
import { readdirSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import pg from 'pg'
import { hubKeepaliveSeconds } from '../../hub/session/mqtt-session.ts'
import type { HubPrinter } from '../../protocol/hub-messages.ts'
import { printerIdFor } from '../../protocol/printer-id.ts'
import { RECEIPT_PRINTER } from '../cloud/test-cloud.ts'
import { type CloudProcess, startCloudProcess, stopAll } from '../e2e/harness.ts'
import { startPostgres } from '../helpers/postgres-server.ts'
import { startRedisServer } from '../helpers/redis-server.ts'
import { tempDir } from '../helpers/temp-dir.ts'
import { rssOf } from './hub-footprint.ts'
import { tcpExtCounters, tcpExtGrowth } from './kernel-counters.ts'
import { startBenchMosquitto } from './multi-node-broker.ts'
import { type BenchDatabase, openBenchDatabase } from './multi-node-database.ts'
import { createJobs, type JobTarget } from './multi-node-dispatch.ts'
import { type Fleet, startFleet, wallNow } from './multi-node-fleet.ts'
import type { WorkerHub } from './multi-node-hub-worker.ts'
import { type BenchAccount, createAccounts, enrollHubs } from './multi-node-provision.ts'
import {
  type CpuFigure,
  type Figures,
  formatFloor,
  formatReport,
  type RunSettings,
} from './multi-node-report.ts'
import { STATEMENT_STATISTICS, type StatementStatistics, statementStatistics } from './pg-statements.ts'
import { type MeasuredProcess, measureCpu } from './process-cpu.ts'
import { summarize } from './stats.ts'

/**
 * Many hubs on the cloud beyond one machine (issue 9): Mosquitto (dynamic security, one client per hub) and
 * two cloud nodes on PostgreSQL and Redis, beside the embedded single node (aedes in the cloud's process,
 * SQLite) in the same run, with the same simulated hubs (multi-node-hub-worker.ts: the hub's MQTT session as
 * the broker sees it, each with its own enrolled agent id and credential, confined to its own topics by the
 * broker), and Mosquitto at the priority the unit in docs/several-nodes.md gives it (multi-node-broker.ts):
 *   a. hubs held connected and authenticated at once, for a while, each sending its state report every 30 s as
 *      the real hub's health rounds do, and the CPU the cloud's processes use meanwhile;
 *   b. the cloud nodes' resident memory (VmRSS) with all of them connected;
 *   c. after the broker restarts (Mosquitto; for the embedded node, the node itself, since the broker runs
 *      in it), the time until every hub has reconnected (connected, subscribed, presence acknowledged), the
 *      hubs backing off with the hub's exponential backoff and full jitter; and until the cloud has
 *      marked every hub online in its database; with the handshakes this machine's kernel dropped because the
 *      broker's accept queue was full (Mosquitto 2.0 listens with a backlog of 100), which set the tail whenever
 *      the broker waited for CPU;
 *   d. jobs dispatched per second to many connected hubs: POST /api/v1/print-jobs (one uploaded document,
 *      printers of every hub in turn, the two nodes in turn) → the job's offer received by its hub; the rate
 *      is jobs over the time from the first request sent to the last offer received;
 *   e. d. again with job-floor-node.ts in place of the cluster's nodes: the same PostgreSQL, Mosquitto, hubs and
 *      requests, with each job only a row and three messages, and the cluster's CPU per job over the floor's.
 */
const env = process.env
const HUBS = Number(env.BENCH_MULTI_NODE_HUBS ?? 19_500)
/**
 * Jobs created in d.: enough for a sustained rate. The first seconds of a run are a node's warm-up (its code
 * compiled, each statement text prepared on each connection): at 19,500 hubs, 3,000 jobs measured 181 jobs/s
 * where 20,000 measured 321.
 */
const JOBS = Number(env.BENCH_MULTI_NODE_JOBS ?? 20_000)
/** The hubs' accounts (hub n belongs to account n modulo this): a fleet serves many customers. */
const ACCOUNTS = Number(env.BENCH_MULTI_NODE_ACCOUNTS ?? 100)
const CONNECTS_PER_SECOND = Number(env.BENCH_MULTI_NODE_CONNECTS_PER_SECOND ?? 500)
const HOLD_MS = Number(env.BENCH_MULTI_NODE_HOLD_SECONDS ?? 10) * 1000
/** The hub's default HUB_HEALTH_INTERVAL_MS: each health round ends with a state report. */
const STATE_EVERY_MS = Number(env.BENCH_MULTI_NODE_STATE_SECONDS ?? 30) * 1000
/** How long after every hub is back the cloud's database may take to show them all online. */
const CLOUD_CATCH_UP_MS = 30_000
/** How long the hubs may take to reconnect after the broker restarted. */
const RECONNECT_BOUND_MS = 90_000
/** Requests in flight to each node while creating jobs. */
const IN_FLIGHT = 32
/** Hubs per worker process: far under the open-file limit (one descriptor per connection). */
const PER_WORKER = 5_000
/** The cloud's default HUB_KEEPALIVE_SECONDS (the hub's keep-alive is two thirds of it). */
const KEEPALIVE_SECONDS = 30
/** Printed jobs of yesterday on each printer before the run (multi-node-database.ts, seedHistory). */
const HISTORY_PER_PRINTER = Number(env.BENCH_MULTI_NODE_HISTORY_PER_PRINTER ?? 10)
/** Print what PostgreSQL spent its time on while the cluster's jobs were created (pg_stat_statements). */
const PG_STATEMENTS = env.BENCH_PG_STATEMENTS === '1'
/**
 * Which setups run (`embedded,cluster,floor`); one alone, to study it, leaves the other's column empty. The
 * floor only creates jobs (d.), for the cluster's CPU per job over it.
 */
const SETUPS = (env.BENCH_MULTI_NODE_SETUPS ?? 'embedded,cluster,floor').split(',')

export const PRINTER: HubPrinter = {
  key: 'receipt',
  name: 'Bench receipt printer',
  uri: 'socket://192.0.2.10:9100',
  languages: ['escpos'],
  capabilities: { ...RECEIPT_PRINTER, document_formats: ['raw'] },
  health: { state: 'ready', reasons: [], checked_at: new Date().toISOString() },
}

/** As `ulimit -n` would: every process started from here may open as many files as the hard limit allows. */
export function raiseOpenFileLimit(): number {
  const hard = Number(
    execFileSync('prlimit', ['--pid', String(process.pid), '--nofile', '--output=HARD', '--noheadings'], {
      encoding: 'utf8',
    }).trim(),
  )
  execFileSync('prlimit', ['--pid', String(process.pid), `--nofile=${hard}:${hard}`])
  return hard
}

/** SIGTERM, as an operator stops a node (its exit handlers run), then SIGKILL to what is left after 10 s. */
export async function stopGracefully(clouds: CloudProcess[]): Promise<void> {
  await Promise.race([Promise.all(clouds.map((cloud) => cloud.stop())), sleep(10_000)])
}

/**
 * Ends what a setup started: its simulated hubs, its nodes (gracefully, then any process still running), then
 * its peers in the reverse order of `stops`, and its directory.
 */
export async function stopSetup(
  fleet: Fleet | undefined,
  nodes: CloudProcess[],
  stops: (() => Promise<void>)[],
  dir: { remove(): void },
): Promise<void> {
  await fleet?.stop()
  await stopGracefully(nodes)
  await stopAll()
  for (const stop of stops.reverse()) await stop().catch(() => {})
  dir.remove()
}

/** Progress on stderr, so that a long run shows where it is. */
const progress = (what: string) => process.stderr.write(`multi-node: ${what}\n`)
const seconds = (fromMs: number, toMs: number) => (toMs - fromMs) / 1000
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
const descriptorsOf = (pid: number) => readdirSync(`/proc/${pid}/fd`).length

/**
 * The processes whose CPU the benchmark reports: the cloud's (nodes, broker, database; a getter, since the
 * embedded node is another process after its restart) and the load's (the simulated hubs, and this process,
 * whose HTTP client creates the jobs), which on this machine share its two cores with the cloud.
 */
interface Processes {
  cloud: () => MeasuredProcess[]
  load: MeasuredProcess[]
}

const loadOf = (fleet: Fleet): MeasuredProcess[] => [
  { name: 'simulated hubs', pids: fleet.pids() },
  { name: 'benchmark', pids: [process.pid] },
]

/** The cluster's processes (or the floor's: the same but for its nodes), and the load on them. */
const clusterProcesses = (
  nodeName: string,
  nodes: CloudProcess[],
  mosquittoPid: () => number,
  postgresPid: number,
  fleet: Fleet,
): Processes => ({
  cloud: () => [
    ...nodes.map((n, i) => ({ name: `${nodeName} ${'ab'[i]}`, pids: [n.process.pid!] })),
    { name: 'mosquitto', pids: [mosquittoPid()] },
    { name: 'postgresql', pids: [postgresPid], withChildren: true },
  ],
  load: loadOf(fleet),
})

/** The simulated hubs of a setup, on its broker. */
const fleetOn = (mqttUrl: string, hubs: BenchHub[]) =>
  startFleet({
    mqttUrl,
    keepaliveSeconds: KEEPALIVE_SECONDS,
    hubs: logins(hubs),
    printer: PRINTER,
    perWorker: PER_WORKER,
    startsPerSecond: CONNECTS_PER_SECOND,
    stateEveryMs: STATE_EVERY_MS,
  })

function measurePhase(processes: Processes): () => CpuFigure {
  const [cloud, load] = [measureCpu(processes.cloud()), measureCpu(processes.load)]
  return () => ({ cloud: cloud(), load: load() })
}

/**
 * a and b: connect the fleet and wait until the cloud has every hub online with its printer, each within a
 * bound (a broker that cannot take them all is a figure, not a failure); then hold, measuring the CPU of
 * `measured` while the hubs send their periodic state reports.
 */
async function connectAll(
  fleet: Fleet,
  database: BenchDatabase,
  startedAt: number,
  processes: Processes,
  statements?: StatementStatistics,
) {
  const since = new Date(startedAt).toISOString()
  const connected = await fleet
    .until((s) => s.connected === HUBS, (HUBS / CONNECTS_PER_SECOND) * 1000 + 60_000)
    .catch(() => fleet.status())
  const connectSeconds = connected.connected === HUBS ? seconds(startedAt, wallNow()) : undefined
  const known = async () => Math.min(await database.onlineSince(since), await database.printers())
  const deadline = Date.now() + 60_000
  let cloudOnline = await known()
  while (cloudOnline < connected.connected && Date.now() < deadline) {
    await sleep(200)
    cloudOnline = await known()
  }
  const cloudOnlineSeconds = cloudOnline === HUBS ? seconds(startedAt, wallNow()) : undefined
  progress(`seeding ${HISTORY_PER_PRINTER} printed jobs of history per printer`)
  await database.seedHistory(HISTORY_PER_PRINTER)
  const [cpu, reportsBefore, holdStart] = [
    measurePhase(processes),
    (await fleet.status()).stateReports,
    wallNow(),
  ]
  await statements?.reset()
  await sleep(HOLD_MS)
  if (statements)
    console.log(['PostgreSQL while the fleet was held:', ...(await statements.top(12))].join('\n'))
  const [heldCpu, held] = [cpu(), await fleet.status()]
  const heldSeconds = seconds(holdStart, wallNow())
  return {
    connected: connected.connected,
    connectSeconds,
    cloudOnline,
    cloudOnlineSeconds,
    connectRetries: connected.retries,
    heldConnected: held.connected,
    heldStateReportsPerSecond: (held.stateReports - reportsBefore) / heldSeconds,
    heldCpu,
  }
}

/** c: restart the broker; every hub back (per the hubs), then every hub online (per the cloud's database). */
async function reconnectAll(
  fleet: Fleet,
  database: BenchDatabase,
  restart: () => Promise<{ stopAt: number; downAt: number; upAt: number }>,
  processes: Processes,
) {
  const { retries: before, connected: wanted, reasons: reasonsBefore } = await fleet.status()
  await fleet.mark()
  const kernelBefore = tcpExtCounters()
  const { stopAt, downAt, upAt } = await restart()
  const cpu = measurePhase(processes)
  // Bounded: every hub that was connected before, back and connected.
  const back = await fleet
    .until((s) => s.connectedSinceMark >= wanted && s.connected >= wanted, RECONNECT_BOUND_MS)
    .catch(() => fleet.status())
  const cpuBack = cpu()
  const allBack = back.connectedSinceMark >= wanted
  const kernel = tcpExtGrowth(kernelBefore, ['ListenOverflows', 'TCPSynRetrans'])
  const { connectedAt, lostAt } = await fleet.sinceMark()
  // Bounded: a presence the cloud never receives leaves its hub offline in the database until it reconnects.
  const since = new Date(downAt).toISOString()
  const deadline = Date.now() + CLOUD_CATCH_UP_MS
  let online = await database.onlineSince(since)
  while (online < back.connected && Date.now() < deadline) {
    await sleep(200)
    online = await database.onlineSince(since)
  }
  return {
    brokerDownSeconds: seconds(stopAt, upAt),
    /** Hubs connected before the restart, and how many of them reconnected within the bound. */
    wanted,
    back: back.connectedSinceMark,
    fromStopSeconds: allBack ? seconds(stopAt, back.lastConnectAt) : undefined,
    fromUpSeconds: allBack ? seconds(upAt, back.lastConnectAt) : undefined,
    cloudOnline: online,
    cloudOnlineFromStopSeconds: online === wanted ? seconds(stopAt, wallNow()) : undefined,
    retries: back.retries - before,
    reasons: Object.entries(back.reasons)
      .map(([reason, n]) => [reason, n - (reasonsBefore[reason] ?? 0)] as const)
      .filter(([, n]) => n > 0)
      .map(([reason, n]) => `${reason} ${n}`)
      .join(', '),
    failedWhileUp: lostAt.filter((at) => at >= upAt).length,
    /** Seconds from listening again to each hub's reconnect (0 for those that reconnected before). */
    backFromUp: summarize(connectedAt.map((at) => Math.max(0, at - upAt) / 1000)),
    kernel,
    cpu: cpuBack,
  }
}

export type BenchHub = WorkerHub & { account: BenchAccount }
/** The printers of the hubs whose state report the cloud has (all of them, unless some never connected). */
export async function targets(hubs: BenchHub[], database: BenchDatabase): Promise<JobTarget[]> {
  const known = await database.printerIds()
  return hubs
    .map((hub) => ({ printerId: printerIdFor(hub.agentId, PRINTER.key), account: hub.account }))
    .filter((target) => known.has(target.printerId))
}
export const logins = (hubs: BenchHub[]): WorkerHub[] =>
  hubs.map(({ agentId, credential }) => ({ agentId, credential }))

export const CLOUD_ENV = {
  HUB_KEEPALIVE_SECONDS: String(KEEPALIVE_SECONDS),
  PRINT_QUEUE_CAPACITY: '10000000',
  RATE_LIMIT_PER_IP: '1000000000',
  RATE_LIMIT_PER_ACCOUNT: '1000000000',
  // Node options for the cloud nodes alone, to study them (`--import=FILE`, a preload that profiles).
  ...(env.BENCH_CLOUD_NODE_OPTIONS && { NODE_OPTIONS: env.BENCH_CLOUD_NODE_OPTIONS }),
}

/** What the cloud processes warned about most (by message), for a run that failed. */
function warnings(clouds: CloudProcess[]): string {
  const counts = new Map<string, number>()
  for (const cloud of clouds)
    for (const line of cloud.logs.join('').split('\n')) {
      const level = /"level":(\d+)/.exec(line)?.[1]
      const msg = /"msg":"([^"]*)"/.exec(line)?.[1]
      if (Number(level) >= 40 && msg) counts.set(msg, (counts.get(msg) ?? 0) + 1)
    }
  return [...counts].map(([msg, n]) => `     ${n} x ${msg}`).join('\n')
}

async function embedded(): Promise<Figures> {
  const dataDir = tempDir('bench-embedded-')
  let fleet: Fleet | undefined
  let database: BenchDatabase | undefined
  const clouds: CloudProcess[] = []
  try {
    database = await openBenchDatabase({ dataDir: dataDir.path })
    progress(`embedded: enrolling ${HUBS} hubs`)
    const accounts = await createAccounts(database.storage, ACCOUNTS)
    const hubs = await enrollHubs(database.storage, accounts, HUBS, 1)
    progress('embedded: starting the cloud node')
    let cloud = await startCloudProcess({ dataDir: dataDir.path, env: CLOUD_ENV })
    clouds.push(cloud)
    const mqttUrl = `mqtt://127.0.0.1:${cloud.mqttPort}`
    const startedAt = wallNow()
    fleet = await fleetOn(mqttUrl, hubs)
    progress('embedded: connecting the hubs')
    const processes: Processes = {
      cloud: () => [{ name: 'cloud node (with aedes)', pids: [cloud.process.pid!] }],
      load: loadOf(fleet),
    }
    const connect = await connectAll(fleet, database, startedAt, processes)
    const rss = [{ name: 'cloud node (with aedes)', mb: rssOf(cloud.process.pid!) }]
    progress(`embedded: creating ${JOBS} jobs`)
    const dispatch = await createJobs(
      fleet,
      [cloud.url],
      await targets(hubs, database),
      JOBS,
      IN_FLIGHT,
      () => measurePhase(processes),
    )
    progress('embedded: restarting the node')
    const reconnect = await reconnectAll(
      fleet,
      database,
      async () => {
        const stopAt = wallNow()
        await cloud.stop()
        const downAt = wallNow()
        cloud = await startCloudProcess({
          dataDir: dataDir.path,
          port: cloud.port,
          mqttPort: cloud.mqttPort,
          env: CLOUD_ENV,
        })
        clouds.push(cloud)
        return { stopAt, downAt, upAt: wallNow() }
      },
      processes,
    )
    return {
      name: 'embedded: 1 node, aedes, SQLite',
      ...connect,
      rss,
      reconnect,
      dispatch,
      warnings: warnings(clouds),
    }
  } catch (error) {
    console.log(`embedded node warnings:\n${warnings(clouds)}`)
    throw error
  } finally {
    await fleet?.stop()
    await stopGracefully(clouds)
    await stopAll()
    await database?.close()
    dataDir.remove()
  }
}

async function multiNode(): Promise<Figures> {
  const shared = tempDir('bench-nodes-')
  const postgres = await startPostgres(PG_STATEMENTS ? STATEMENT_STATISTICS : {})
  const stops: (() => Promise<void>)[] = [() => postgres.stop()]
  let fleet: Fleet | undefined
  const clouds: CloudProcess[] = []
  try {
    const databaseUrl = await postgres.createDatabase()
    const statements = PG_STATEMENTS ? await statementStatistics(databaseUrl) : undefined
    if (statements) stops.push(() => statements.close())
    const redis = await startRedisServer()
    stops.push(() => redis.stop())
    const database = await openBenchDatabase({ dataDir: shared.path, databaseUrl })
    stops.push(() => database.close())
    progress(`cluster: enrolling ${HUBS} hubs`)
    const accounts = await createAccounts(database.storage, ACCOUNTS)
    const hubs = await enrollHubs(database.storage, accounts, HUBS, 8)
    progress('cluster: starting Mosquitto and two cloud nodes')
    const mosquitto = await startBenchMosquitto(logins(hubs))
    stops.push(() => mosquitto.stop())
    const node = (clientId: string) =>
      startCloudProcess({
        dataDir: shared.path,
        env: {
          ...CLOUD_ENV,
          DATABASE_URL: databaseUrl,
          REDIS_URL: redis.url,
          MQTT_URL: mosquitto.url,
          MQTT_ADMIN_PASSWORD_FILE: mosquitto.passwordFile,
          MQTT_CLIENT_ID: clientId,
        },
      })
    const nodes = await Promise.all([node('bench-node-a'), node('bench-node-b')])
    clouds.push(...nodes)
    const startedAt = wallNow()
    fleet = await fleetOn(mosquitto.url, hubs)
    progress('cluster: connecting the hubs')
    const processes = clusterProcesses('cloud node', nodes, mosquitto.pid, postgres.pid, fleet)
    const connect = await connectAll(fleet, database, startedAt, processes, statements)
    const rss = [
      ...nodes.map((n, i) => ({ name: `cloud node ${'ab'[i]}`, mb: rssOf(n.process.pid!) })),
      { name: 'mosquitto', mb: rssOf(mosquitto.pid()) },
    ]
    const brokerDescriptors = descriptorsOf(mosquitto.pid())
    progress(`cluster: creating ${JOBS} jobs`)
    await statements?.reset()
    const dispatch = await createJobs(
      fleet,
      nodes.map((n) => n.url),
      await targets(hubs, database),
      JOBS,
      IN_FLIGHT,
      () => measurePhase(processes),
    )
    if (statements)
      console.log(
        ['PostgreSQL while the jobs were created (pg_stat_statements):', ...(await statements.top(20))].join(
          '\n',
        ),
      )
    progress('cluster: restarting Mosquitto')
    const reconnect = await reconnectAll(fleet, database, () => mosquitto.restart(), processes)
    return {
      name: `cluster: 2 nodes, Mosquitto${mosquitto.nice ? ` (nice ${mosquitto.nice})` : ''}, PostgreSQL, Redis`,
      ...connect,
      rss,
      brokerDescriptors,
      reconnect,
      dispatch,
      warnings: warnings(clouds),
    }
  } catch (error) {
    console.log(`cluster node warnings:\n${warnings(clouds)}`)
    throw error
  } finally {
    await stopSetup(fleet, clouds, stops, shared)
  }
}

/** What the floor setup measured: its jobs, as d. of the others. */
export interface FloorFigures {
  /** As fast as the floor takes them. */
  fast: Figures['dispatch']
  /** At the cluster's rate, when the cluster ran before. */
  paced?: Figures['dispatch']
  /** Rows the floor nodes wrote, and of those marked printed by the hubs' reports (by the end of the wait). */
  rows: number
  printed: number
}

/**
 * e. d. at the floor of its work: the cluster's PostgreSQL, Mosquitto and simulated hubs, with two processes of
 * job-floor-node.ts in place of the cloud nodes (what they leave out: its comment). The cloud's CPU per job over
 * this is the cost of everything a job is besides its row writes and its messages. With `perSecond` (the
 * cluster's rate in the same run) the jobs are paced at it: as fast as they go, the floor takes three times as
 * many a second, and its statements and messages batch more than the cluster's could.
 */
async function floor(perSecond?: number): Promise<FloorFigures> {
  const shared = tempDir('bench-floor-')
  const postgres = await startPostgres()
  const stops: (() => Promise<void>)[] = [() => postgres.stop()]
  let fleet: Fleet | undefined
  const nodes: CloudProcess[] = []
  try {
    const databaseUrl = await postgres.createDatabase()
    const database = await openBenchDatabase({ dataDir: shared.path, databaseUrl })
    stops.push(() => database.close())
    const client = new pg.Client({ connectionString: databaseUrl })
    await client.connect()
    stops.push(() => client.end())
    await client.query(`CREATE TABLE floor_jobs (id uuid PRIMARY KEY, printer_id uuid NOT NULL,
      document_id uuid NOT NULL, status text NOT NULL, created_at timestamptz NOT NULL, updated_at timestamptz)`)
    await client.query('CREATE INDEX floor_jobs_printer ON floor_jobs (printer_id, created_at)')
    progress(`floor: enrolling ${HUBS} hubs`)
    const accounts = await createAccounts(database.storage, ACCOUNTS)
    const hubs = await enrollHubs(database.storage, accounts, HUBS, 8)
    const agentsFile = path.join(shared.path, 'agents.json')
    writeFileSync(agentsFile, JSON.stringify(hubs.map((hub) => hub.agentId)))
    progress('floor: starting Mosquitto and two floor nodes')
    const mosquitto = await startBenchMosquitto(logins(hubs))
    stops.push(() => mosquitto.stop())
    const node = (clientId: string) =>
      startCloudProcess({
        script: 'test/bench/job-floor-node.ts',
        dataDir: shared.path,
        env: {
          ...CLOUD_ENV,
          DATABASE_URL: databaseUrl,
          MQTT_URL: mosquitto.url,
          MQTT_ADMIN_PASSWORD_FILE: mosquitto.passwordFile,
          MQTT_CLIENT_ID: clientId,
          FLOOR_AGENTS_FILE: agentsFile,
          FLOOR_PRINTER_KEY: PRINTER.key,
        },
      })
    nodes.push(...(await Promise.all([node('bench-floor-a'), node('bench-floor-b')])))
    fleet = await fleetOn(mosquitto.url, hubs)
    progress('floor: connecting the hubs')
    await fleet.until((s) => s.connected === HUBS, (HUBS / CONNECTS_PER_SECOND) * 1000 + 60_000)
    const processes = clusterProcesses('floor node', nodes, mosquitto.pid, postgres.pid, fleet)
    const targets = hubs.map((hub) => ({
      printerId: printerIdFor(hub.agentId, PRINTER.key),
      account: hub.account,
    }))
    const urls = nodes.map((n) => n.url)
    const started = fleet
    const jobs = (pace?: number) =>
      createJobs(started, urls, targets, JOBS, IN_FLIGHT, () => measurePhase(processes), pace)
    progress(`floor: creating ${JOBS} jobs as fast as they are taken`)
    const fast = await jobs()
    let paced: FloorFigures['paced']
    if (perSecond) {
      // createJobs takes the offers of jobs created from a second before its start as its own.
      await sleep(2000)
      progress(`floor: creating ${JOBS} jobs at ${perSecond.toFixed(0)} a second`)
      paced = await jobs(perSecond)
    }
    const count = async (status?: string) => {
      const { rows } = await client.query<{ n: string }>(
        'SELECT count(*) AS n FROM floor_jobs WHERE $1::text IS NULL OR status = $1',
        [status ?? null],
      )
      return Number(rows[0]!.n)
    }
    const expected = paced ? 2 * JOBS : JOBS
    const deadline = Date.now() + 30_000
    while ((await count('printed')) < expected && Date.now() < deadline) await sleep(200)
    return { fast, paced, rows: await count(), printed: await count('printed') }
  } finally {
    await stopSetup(fleet, nodes, stops, shared)
  }
}

export async function benchMultiNode(): Promise<void> {
  const limit = raiseOpenFileLimit()
  if (limit < HUBS + 200)
    console.log(
      `warning: open-file limit ${limit} is below ${HUBS} hubs + 200: the broker cannot hold them all`,
    )
  const e = SETUPS.includes('embedded') ? await embedded() : undefined
  const m = SETUPS.includes('cluster') ? await multiNode() : undefined
  const f = SETUPS.includes('floor') ? await floor(m?.dispatch.dispatchedPerSecond) : undefined
  const settings: RunSettings = {
    hubs: HUBS,
    workers: Math.ceil(HUBS / PER_WORKER),
    openFileLimit: limit,
    connectsPerSecond: CONNECTS_PER_SECOND,
    keepaliveSeconds: hubKeepaliveSeconds(KEEPALIVE_SECONDS),
    holdSeconds: HOLD_MS / 1000,
    stateEverySeconds: STATE_EVERY_MS / 1000,
    jobs: JOBS,
    accounts: ACCOUNTS,
    inFlight: IN_FLIGHT,
    cloudCatchUpSeconds: CLOUD_CATCH_UP_MS / 1000,
  }
  for (const line of formatReport(settings, e, m)) console.log(line)
  if (f) for (const line of formatFloor(f, m)) console.log(line)
}
