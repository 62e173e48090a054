import { execFileSync } from 'node:child_process'
import { readdirSync } from 'node:fs'
import { printerIdFor } from '../../cloud/auth/stable-id.ts'
import { hubKeepaliveSeconds } from '../../hub/session/mqtt-session.ts'
import type { HubPrinter } from '../../protocol/hub-messages.ts'
import { RECEIPT_PRINTER } from '../cloud/test-cloud.ts'
import { type CloudProcess, startCloudProcess, stopAll } from '../e2e/harness.ts'
import { startPostgres } from '../helpers/postgres-server.ts'
import { startRedisServer } from '../helpers/redis-server.ts'
import { tempDir } from '../helpers/temp-dir.ts'
import { rssOf } from './hub-footprint.ts'
import { tcpExtCounters, tcpExtGrowth } from './kernel-counters.ts'
import { startBenchMosquitto } from './multi-node-broker.ts'
import { type BenchDatabase, openBenchDatabase } from './multi-node-database.ts'
import { createJobs, type Dispatch, type JobTarget } from './multi-node-dispatch.ts'
import { type Fleet, startFleet, wallNow } from './multi-node-fleet.ts'
import type { WorkerHub } from './multi-node-hub-worker.ts'
import { type BenchAccount, createAccounts, enrollHubs } from './multi-node-provision.ts'
import { type CpuShare, formatCpu, type MeasuredProcess, measureCpu } from './process-cpu.ts'
import { formatSummary, type Summary, summarize } from './stats.ts'

/**
 * Many hubs on the cloud beyond one machine (issue 9): Mosquitto (dynamic security, one client per hub) and
 * two cloud nodes on PostgreSQL and Redis, beside the embedded single node (aedes in the cloud's process,
 * SQLite) in the same run, with the same simulated hubs (multi-node-hub-worker.ts: the hub's MQTT session as
 * the broker sees it, each with its own enrolled agent id and credential, confined to its own topics by the
 * broker), and Mosquitto at the priority the README's unit gives it (multi-node-broker.ts):
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
 *      is jobs over the time from the first request sent to the last offer received.
 */
const env = process.env
const HUBS = Number(env.BENCH_MULTI_NODE_HUBS ?? 19_500)
const JOBS = Number(env.BENCH_MULTI_NODE_JOBS ?? 3_000)
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

const PRINTER: HubPrinter = {
  key: 'receipt',
  name: 'Bench receipt printer',
  uri: 'socket://192.0.2.10:9100',
  languages: ['escpos'],
  capabilities: { ...RECEIPT_PRINTER, document_formats: ['raw'] },
  health: { state: 'ready', reasons: [], checked_at: new Date().toISOString() },
}

interface Figures {
  name: string
  connected: number
  /** undefined: not all within the bound */
  connectSeconds: number | undefined
  cloudOnline: number
  cloudOnlineSeconds: number | undefined
  connectRetries: number
  heldConnected: number
  /** State reports the hubs sent per second while held. */
  heldStateReportsPerSecond: number
  /** CPU while held. */
  heldCpu: CpuFigure
  rss: { name: string; mb: number }[]
  brokerDescriptors?: number
  reconnect: {
    brokerDownSeconds: number
    wanted: number
    back: number
    fromStopSeconds: number | undefined
    fromUpSeconds: number | undefined
    /** Hubs the cloud's database shows online again, and when all were (undefined: not within the bound). */
    cloudOnline: number
    cloudOnlineFromStopSeconds: number | undefined
    retries: number
    /** Why hubs could not connect (each hub's reason logged when it changes), `reason count, …`. */
    reasons: string
    failedWhileUp: number
    backFromUp: Summary
    /** This machine's handshakes dropped by a full accept queue, and SYNs sent again, over the reconnect. */
    kernel: Record<string, number> | undefined
    /** CPU from listening again until every hub was back (or the bound). */
    cpu: CpuFigure
  }
  dispatch: Dispatch & { cpu: CpuFigure }
  /** The cloud nodes' warnings and errors over the run, by message. */
  warnings: string
}

/** As `ulimit -n` would: every process started from here may open as many files as the hard limit allows. */
function raiseOpenFileLimit(): number {
  const hard = Number(
    execFileSync('prlimit', ['--pid', String(process.pid), '--nofile', '--output=HARD', '--noheadings'], {
      encoding: 'utf8',
    }).trim(),
  )
  execFileSync('prlimit', ['--pid', String(process.pid), `--nofile=${hard}:${hard}`])
  return hard
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

/** CPU over one phase of the run, % of one core. */
interface CpuFigure {
  cloud: CpuShare[]
  load: CpuShare[]
}

const loadOf = (fleet: Fleet): MeasuredProcess[] => [
  { name: 'simulated hubs', pids: fleet.pids() },
  { name: 'benchmark', pids: [process.pid] },
]

function measurePhase(processes: Processes): () => CpuFigure {
  const [cloud, load] = [measureCpu(processes.cloud()), measureCpu(processes.load)]
  return () => ({ cloud: cloud(), load: load() })
}

/**
 * a and b: connect the fleet and wait until the cloud has every hub online with its printer, each within a
 * bound (a broker that cannot take them all is a figure, not a failure); then hold, measuring the CPU of
 * `measured` while the hubs send their periodic state reports.
 */
async function connectAll(fleet: Fleet, database: BenchDatabase, startedAt: number, processes: Processes) {
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
  const [cpu, reportsBefore, holdStart] = [
    measurePhase(processes),
    (await fleet.status()).stateReports,
    wallNow(),
  ]
  await sleep(HOLD_MS)
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

type BenchHub = WorkerHub & { account: BenchAccount }
/** The printers of the hubs whose state report the cloud has (all of them, unless some never connected). */
async function targets(hubs: BenchHub[], database: BenchDatabase): Promise<JobTarget[]> {
  const known = await database.printerIds()
  return hubs
    .map((hub) => ({ printerId: printerIdFor(hub.agentId, PRINTER.key), account: hub.account }))
    .filter((target) => known.has(target.printerId))
}
const logins = (hubs: BenchHub[]): WorkerHub[] =>
  hubs.map(({ agentId, credential }) => ({ agentId, credential }))

const CLOUD_ENV = {
  HUB_KEEPALIVE_SECONDS: String(KEEPALIVE_SECONDS),
  PRINT_QUEUE_CAPACITY: '10000000',
  RATE_LIMIT_PER_IP: '1000000000',
  RATE_LIMIT_PER_ACCOUNT: '1000000000',
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
    fleet = await startFleet({
      mqttUrl,
      keepaliveSeconds: KEEPALIVE_SECONDS,
      hubs: logins(hubs),
      printer: PRINTER,
      perWorker: PER_WORKER,
      startsPerSecond: CONNECTS_PER_SECOND,
      stateEveryMs: STATE_EVERY_MS,
    })
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
    await stopAll()
    await database?.close()
    dataDir.remove()
  }
}

async function multiNode(): Promise<Figures> {
  const shared = tempDir('bench-nodes-')
  const postgres = await startPostgres()
  const stops: (() => Promise<void>)[] = [() => postgres.stop()]
  let fleet: Fleet | undefined
  const clouds: CloudProcess[] = []
  try {
    const databaseUrl = await postgres.createDatabase()
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
    fleet = await startFleet({
      mqttUrl: mosquitto.url,
      keepaliveSeconds: KEEPALIVE_SECONDS,
      hubs: logins(hubs),
      printer: PRINTER,
      perWorker: PER_WORKER,
      startsPerSecond: CONNECTS_PER_SECOND,
      stateEveryMs: STATE_EVERY_MS,
    })
    progress('cluster: connecting the hubs')
    const processes: Processes = {
      cloud: () => [
        ...nodes.map((n, i) => ({ name: `cloud node ${'ab'[i]}`, pids: [n.process.pid!] })),
        { name: 'mosquitto', pids: [mosquitto.pid()] },
        { name: 'postgresql', pids: [postgres.pid], withChildren: true },
      ],
      load: loadOf(fleet),
    }
    const connect = await connectAll(fleet, database, startedAt, processes)
    const rss = [
      ...nodes.map((n, i) => ({ name: `cloud node ${'ab'[i]}`, mb: rssOf(n.process.pid!) })),
      { name: 'mosquitto', mb: rssOf(mosquitto.pid()) },
    ]
    const brokerDescriptors = descriptorsOf(mosquitto.pid())
    progress(`cluster: creating ${JOBS} jobs`)
    const dispatch = await createJobs(
      fleet,
      nodes.map((n) => n.url),
      await targets(hubs, database),
      JOBS,
      IN_FLIGHT,
      () => measurePhase(processes),
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
    await fleet?.stop()
    await stopAll()
    for (const stop of stops.reverse()) await stop().catch(() => {})
    shared.remove()
  }
}

function report(limit: number, e: Figures, m: Figures): void {
  const ratio = (a: number | undefined, b: number | undefined) =>
    a === undefined || b === undefined || b === 0 ? 'n/a' : `${(a / b).toFixed(2)}x`
  const mb = (f: Figures) => f.rss.map((r) => `${r.name} ${r.mb.toFixed(0)} MB`).join(', ')
  const nodeMb = (f: Figures) =>
    f.rss.filter((r) => r.name.startsWith('cloud node')).reduce((sum, r) => sum + r.mb, 0)
  const row = (label: string, a: string, b: string, r: string) =>
    `  ${label.padEnd(44)} | ${a.padEnd(22)} | ${b.padEnd(22)} | ${r}`
  const cpuSum = (f: Figures) => f.heldCpu.cloud.reduce((sum, p) => sum + p.percent, 0)
  /** Each setup's CPU over a phase: the cloud's processes, then the load's. */
  const cpuLines = (pick: (f: Figures) => CpuFigure) =>
    [
      ['embedded:', e],
      ['cluster: ', m],
    ].map(
      ([name, f]) =>
        `     ${name} cloud ${formatCpu(pick(f as Figures).cloud)}; load ${formatCpu(pick(f as Figures).load)}`,
    )
  const s = (x: number | undefined) => (x === undefined ? 'not all in bound' : `${x.toFixed(1)} s`)
  const spread = (x: Summary) => `${x.p50.toFixed(1)} / ${x.p99.toFixed(1)} / ${x.max.toFixed(1)} s`
  const online = (f: Figures) =>
    f.reconnect.cloudOnlineFromStopSeconds === undefined
      ? `only ${f.reconnect.cloudOnline} after +${CLOUD_CATCH_UP_MS / 1000} s`
      : s(f.reconnect.cloudOnlineFromStopSeconds)
  const lines = [
    '',
    `many hubs: ${HUBS} simulated hubs (the hub's MQTT session on the wire, own enrolled credential each) in ${Math.ceil(HUBS / PER_WORKER)} processes; open-file limit ${limit}`,
    `  first connections paced at ${CONNECTS_PER_SECOND}/s; keep-alive ${hubKeepaliveSeconds(KEEPALIVE_SECONDS)} s; held ${HOLD_MS / 1000} s, a state report from each hub every ${STATE_EVERY_MS / 1000} s; ${JOBS} jobs to hubs of ${ACCOUNTS} accounts, ${IN_FLIGHT} requests in flight per node`,
    row('', e.name, m.name, 'ratio cluster/embedded'),
    row(
      'a. hubs connected and authenticated',
      String(e.connected),
      String(m.connected),
      ratio(m.connected, e.connected),
    ),
    row(`   still connected after ${HOLD_MS / 1000} s`, String(e.heldConnected), String(m.heldConnected), ''),
    row(
      '   all connected (from first connect)',
      s(e.connectSeconds),
      s(m.connectSeconds),
      ratio(m.connectSeconds, e.connectSeconds),
    ),
    row(
      '   all online in the database',
      e.cloudOnlineSeconds === undefined ? `${e.cloudOnline} only` : s(e.cloudOnlineSeconds),
      m.cloudOnlineSeconds === undefined ? `${m.cloudOnline} only` : s(m.cloudOnlineSeconds),
      ratio(m.cloudOnlineSeconds, e.cloudOnlineSeconds),
    ),
    row('   connections lost or refused meanwhile', String(e.connectRetries), String(m.connectRetries), ''),
    row(
      '   state reports per second while held',
      e.heldStateReportsPerSecond.toFixed(0),
      m.heldStateReportsPerSecond.toFixed(0),
      '',
    ),
    row(
      '   CPU while held, % of one core (sum)',
      `${cpuSum(e).toFixed(0)} %`,
      `${cpuSum(m).toFixed(0)} %`,
      ratio(cpuSum(m), cpuSum(e)),
    ),
    ...cpuLines((f) => f.heldCpu),
    row(
      'b. cloud nodes VmRSS (sum)',
      `${nodeMb(e).toFixed(0)} MB`,
      `${nodeMb(m).toFixed(0)} MB`,
      ratio(nodeMb(m), nodeMb(e)),
    ),
    `     embedded: ${mb(e)}`,
    `     cluster:  ${mb(m)}; Mosquitto holds ${m.brokerDescriptors} descriptors`,
    row(
      'c. broker down (stop sent → listening)',
      s(e.reconnect.brokerDownSeconds),
      s(m.reconnect.brokerDownSeconds),
      '',
    ),
    row(
      '   hubs back / connected before the restart',
      `${e.reconnect.back} / ${e.reconnect.wanted}`,
      `${m.reconnect.back} / ${m.reconnect.wanted}`,
      '',
    ),
    row(
      '   every hub back (from stop sent)',
      s(e.reconnect.fromStopSeconds),
      s(m.reconnect.fromStopSeconds),
      ratio(m.reconnect.fromStopSeconds, e.reconnect.fromStopSeconds),
    ),
    row(
      '   every hub back (from listening again)',
      s(e.reconnect.fromUpSeconds),
      s(m.reconnect.fromUpSeconds),
      ratio(m.reconnect.fromUpSeconds, e.reconnect.fromUpSeconds),
    ),
    row('   every hub online in the database', online(e), online(m), ''),
    row(
      '   hubs back after listening: p50 / p99 / max',
      spread(e.reconnect.backFromUp),
      spread(m.reconnect.backFromUp),
      '',
    ),
    row(
      '   failed attempts, each then backing off',
      String(e.reconnect.retries),
      String(m.reconnect.retries),
      '',
    ),
    row(
      '   of which seen after it listened again',
      String(e.reconnect.failedWhileUp),
      String(m.reconnect.failedWhileUp),
      '',
    ),
    row(
      '   accept queue full: handshakes dropped',
      String(e.reconnect.kernel?.ListenOverflows ?? 'n/a'),
      String(m.reconnect.kernel?.ListenOverflows ?? 'n/a'),
      '',
    ),
    row(
      '   SYNs sent again meanwhile',
      String(e.reconnect.kernel?.TCPSynRetrans ?? 'n/a'),
      String(m.reconnect.kernel?.TCPSynRetrans ?? 'n/a'),
      '',
    ),
    '   CPU from listening until every hub was back, % of one core',
    ...cpuLines((f) => f.reconnect.cpu),
    row(
      'd. jobs created (201) per second',
      e.dispatch.createdPerSecond.toFixed(0),
      m.dispatch.createdPerSecond.toFixed(0),
      ratio(m.dispatch.createdPerSecond, e.dispatch.createdPerSecond),
    ),
    row(
      '   jobs dispatched per second (POST → offer)',
      e.dispatch.dispatchedPerSecond.toFixed(0),
      m.dispatch.dispatchedPerSecond.toFixed(0),
      ratio(m.dispatch.dispatchedPerSecond, e.dispatch.dispatchedPerSecond),
    ),
    row('   distinct hubs offered a job', String(e.dispatch.hubs), String(m.dispatch.hubs), ''),
    row(
      '   offers received / jobs / failed requests',
      `${e.dispatch.offers} / ${JOBS} / ${e.dispatch.failed}`,
      `${m.dispatch.offers} / ${JOBS} / ${m.dispatch.failed}`,
      '',
    ),
    `   created_at → offer at the hub, embedded: ${formatSummary(e.dispatch.latency, 0)}`,
    `   created_at → offer at the hub, cluster:  ${formatSummary(m.dispatch.latency, 0)}`,
    '   CPU from the first job request to the last offer, % of one core',
    ...cpuLines((f) => f.dispatch.cpu),
  ]
  lines.push(
    `   why hubs could not reconnect, embedded: ${e.reconnect.reasons || 'nothing'}`,
    `   why hubs could not reconnect, cluster:  ${m.reconnect.reasons || 'nothing'}`,
    '  cloud warnings and errors over the run (count x message):',
    `   embedded:\n${e.warnings || '  none'}`,
    `   cluster:\n${m.warnings || '  none'}`,
  )
  for (const line of lines) console.log(line)
}

export async function benchMultiNode(): Promise<void> {
  const limit = raiseOpenFileLimit()
  if (limit < HUBS + 200)
    console.log(
      `warning: open-file limit ${limit} is below ${HUBS} hubs + 200: the broker cannot hold them all`,
    )
  const e = await embedded()
  const m = await multiNode()
  report(limit, e, m)
}
