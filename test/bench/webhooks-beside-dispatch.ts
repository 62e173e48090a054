import { randomBytes, randomUUID } from 'node:crypto'
import path from 'node:path'
import { newWebhookSecret, webhookSecretBox } from '../../cloud/webhooks/secret-box.ts'
import type { WebhookEventType } from '../../protocol/webhooks.ts'
import { type ReceivedDelivery, startWebhookReceiver } from '../cloud/webhooks/receiver.ts'
import { type CloudProcess, startCloudProcess } from '../e2e/harness.ts'
import { startPostgres } from '../helpers/postgres-server.ts'
import { startRedisServer } from '../helpers/redis-server.ts'
import { tempDir } from '../helpers/temp-dir.ts'
import { CLOUD_ENV, logins, PRINTER, raiseOpenFileLimit, stopSetup, targets } from './multi-node.ts'
import { startBenchMosquitto } from './multi-node-broker.ts'
import { type BenchDatabase, openBenchDatabase } from './multi-node-database.ts'
import { createJobs, type Dispatch, type JobTarget } from './multi-node-dispatch.ts'
import { type Fleet, startFleet } from './multi-node-fleet.ts'
import { createAccounts, enrollHubs } from './multi-node-provision.ts'
import { STATEMENT_STATISTICS, statementStatistics } from './pg-statements.ts'
import { cpuSecondsOf } from './process-cpu.ts'
import { formatSummary, type Summary, summarize } from './stats.ts'

/**
 * Webhook deliveries beside dispatch (issue 29): the cluster of the multi-node benchmark (Mosquitto, PostgreSQL,
 * Redis; one node, then two), its simulated hubs taking each offer and reporting it printed, jobs created
 * through the API. First as fast as the cluster takes them with no webhook endpoint (the baseline: what the
 * cloud dispatches when it delivers nothing), then with every account's endpoint taking its jobs' status
 * events (`pending`, `reserved`, `printed`: the simulated hubs report no `printing`), delivered by the same
 * nodes to a receiver on 127.0.0.1 that verifies each signature (receiver.ts): as fast as the cluster takes
 * jobs, then at steady rates: a share of the rate it took as fast (BENCH_BESIDE_SUSTAINED_SHARE), then fixed
 * ones. Deliveries keep up with a load when the events of its last jobs arrive as soon
 * after their change as those of its first.
 */
const env = process.env
const HUBS = Number(env.BENCH_BESIDE_HUBS ?? 600)
const JOBS = Number(env.BENCH_BESIDE_JOBS ?? 6000)
/** Steady loads, jobs a second, each for PACED_SECONDS, after the phases as fast as the cluster takes jobs. */
const RATES = (env.BENCH_BESIDE_RATES ?? '400,600').split(',').filter(Boolean).map(Number)
const PACED_SECONDS = Number(env.BENCH_BESIDE_PACED_SECONDS ?? 10)
/**
 * Then a steady load of this share of the rate the phase as fast as taken dispatched, with every endpoint: the
 * throughput the cloud sustains while it delivers, whatever the machine's speed that day (0: none).
 */
const SUSTAINED_SHARE = Number(env.BENCH_BESIDE_SUSTAINED_SHARE ?? 0.9)
const ACCOUNTS = Number(env.BENCH_BESIDE_ACCOUNTS ?? 100)
const NODES = (env.BENCH_BESIDE_NODES ?? '1,2').split(',').map(Number)
/** Print what PostgreSQL spent its time on while the endpoints' jobs ran (pg_stat_statements; BENCH_PG_STATEMENTS_TOP statements, 12 unless set). */
const PG_STATEMENTS = env.BENCH_PG_STATEMENTS === '1'
const IN_FLIGHT = 32
const JOB_EVENTS: WebhookEventType[] = [
  'print_job.pending',
  'print_job.reserved',
  'print_job.printing',
  'print_job.printed',
]
/** The events each job makes at most: the simulated hubs go from `reserved` to `printed`. */
const EVENTS_PER_JOB = 3
/** How long deliveries may trail the last job before the run stops waiting for them. */
const DRAIN_BOUND_MS = 120_000
const progress = (what: string) => process.stderr.write(`webhooks beside dispatch: ${what}\n`)

interface CpuPerJob {
  total: number
  /** `name ms, …` by process. */
  parts: string
}

interface Deliveries {
  /** Deliveries the cloud wrote (a job's three events, or two when its ack and `printed` were applied together). */
  written: number
  received: number
  /** Deliveries received more than once (an attempt the node saw fail after the receiver had it). */
  receivedAgain: number
  /** From the first job request to the last delivery. */
  perSecond: number
  /** Each delivery's arrival after its event's change (the event's timestamp, the cloud's clock). */
  lag: Summary
  /** The lag of the deliveries of the first and of the last tenth of the events, by their time. */
  firstTenthLag: Summary
  lastTenthLag: Summary
  /** p50 of each tenth of the events, in order: a lag that only grows is a backlog. */
  tenthsP50: number[]
}

interface Phase {
  name: string
  jobs: number
  dispatch: Dispatch
  /** The cloud's processes' CPU from the first request until the last delivery (or the last printed job). */
  cpu: CpuPerJob
  deliveries?: Deliveries
}

interface Run {
  nodes: number
  phases: Phase[]
  failedAttempts: string[]
}

export async function benchWebhooksBesideDispatch(): Promise<void> {
  raiseOpenFileLimit()
  const lines = [
    '',
    `webhooks beside dispatch: ${HUBS} simulated hubs of ${ACCOUNTS} accounts, Mosquitto, PostgreSQL, Redis; jobs created`,
    `  through the API (${IN_FLIGHT} requests in flight per node) as fast as the cluster takes them, with no webhook endpoint`,
    `  (baseline) and with every account's endpoint taking its jobs' status events (${EVENTS_PER_JOB} a job, delivered by the`,
    `  same nodes), then at steady rates for ${PACED_SECONDS} s each; the CPU is the cloud's processes' per job`,
  ]
  const runs: Run[] = []
  for (const nodes of NODES) runs.push(await run(nodes))
  for (const r of runs) {
    lines.push(`  ${r.nodes} node(s); failed webhook attempts: ${r.failedAttempts.join('; ') || 'none'}`)
    const baseline = r.phases[0]!.dispatch.dispatchedPerSecond
    for (const phase of r.phases) {
      const d = phase.dispatch
      lines.push(
        `    ${phase.name}, ${phase.jobs} jobs: dispatched ${d.dispatchedPerSecond.toFixed(0)} jobs/s (${(d.dispatchedPerSecond / baseline).toFixed(2)}x baseline); ` +
          `CPU ${phase.cpu.total.toFixed(2)} ms/job (${phase.cpu.parts})`,
      )
      const w = phase.deliveries
      if (!w) continue
      lines.push(
        `      deliveries ${w.received} of ${w.written} (received twice: ${w.receivedAgain}), ${w.perSecond.toFixed(0)}/s (${(w.perSecond / EVENTS_PER_JOB).toFixed(0)} jobs' worth/s)`,
        `      change → delivery, every event:      ${formatSummary(w.lag, 0)}`,
        `      change → delivery, first 10 % of events: ${formatSummary(w.firstTenthLag, 0)}`,
        `      change → delivery, last 10 % of events:  ${formatSummary(w.lastTenthLag, 0)}`,
        `      change → delivery, p50 of each tenth of the events: ${w.tenthsP50.map((ms) => ms.toFixed(0)).join(', ')} ms`,
      )
    }
  }
  for (const line of lines) console.log(line)
}

async function run(nodeCount: number): Promise<Run> {
  const shared = tempDir('bench-beside-')
  const postgres = await startPostgres(PG_STATEMENTS ? STATEMENT_STATISTICS : {})
  const stops: (() => Promise<void>)[] = [() => postgres.stop()]
  const secret = newWebhookSecret()
  const receiver = await startWebhookReceiver(() => secret)
  stops.push(() => receiver.close())
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
    progress(`${nodeCount} node(s): enrolling ${HUBS} hubs`)
    const accounts = await createAccounts(database.storage, ACCOUNTS)
    const hubs = await enrollHubs(database.storage, accounts, HUBS, 8)
    const mosquitto = await startBenchMosquitto(logins(hubs))
    stops.push(() => mosquitto.stop())
    const key = randomBytes(32)
    const node = (clientId: string) =>
      startCloudProcess({
        dataDir: shared.path,
        script: path.relative(
          path.join(import.meta.dirname, '../..'),
          path.join(import.meta.dirname, 'cloud-node-reaching-receiver.ts'),
        ),
        env: {
          ...CLOUD_ENV,
          DATABASE_URL: databaseUrl,
          REDIS_URL: redis.url,
          MQTT_URL: mosquitto.url,
          MQTT_ADMIN_PASSWORD_FILE: mosquitto.passwordFile,
          MQTT_CLIENT_ID: clientId,
          WEBHOOK_SECRET_KEY: key.toString('base64'),
          BENCH_WEBHOOK_REACH: JSON.stringify(receiver.reach),
        },
      })
    const nodes = await Promise.all(Array.from({ length: nodeCount }, (_, i) => node(`bench-node-${i}`)))
    clouds.push(...nodes)
    fleet = await startFleet({
      mqttUrl: mosquitto.url,
      keepaliveSeconds: Number(CLOUD_ENV.HUB_KEEPALIVE_SECONDS),
      hubs: logins(hubs),
      printer: PRINTER,
      perWorker: 5000,
      startsPerSecond: 500,
      stateEveryMs: 30_000,
    })
    progress(`${nodeCount} node(s): connecting the hubs`)
    await fleet.until((s) => s.connected === HUBS, 60_000)
    const jobTargets = await everyPrinterKnown(database, hubs.length, () => targets(hubs, database))
    const urls = nodes.map((n) => n.url)
    const processes = [
      { name: 'nodes', seconds: () => nodes.reduce((sum, n) => sum + cpuSecondsOf(n.process.pid!), 0) },
      { name: 'Mosquitto', seconds: () => cpuSecondsOf(mosquitto.pid()) },
      { name: 'PostgreSQL', seconds: () => cpuSecondsOf(postgres.pid, true) },
    ]
    const cloudCpu = () => processes.map((p) => p.seconds())
    /** CPU ms per job of `jobs` since `from`, in all and by process. */
    const cpuPerJob = (from: number[], jobs: number): CpuPerJob => {
      const used = cloudCpu().map((seconds, i) => ((seconds - from[i]!) * 1000) / jobs)
      return {
        total: used.reduce((a, b) => a + b, 0),
        parts: processes.map((p, i) => `${p.name} ${used[i]!.toFixed(2)}`).join(', '),
      }
    }
    const phase = async (name: string, jobs: number, perSecond?: number): Promise<Phase> => {
      progress(`${nodeCount} node(s): ${name}, ${jobs} jobs`)
      const [from, startedAt, firstDelivery] = [cloudCpu(), Date.now(), receiver.received.length]
      const writtenBefore = (await database.webhookDeliveries()).written
      await statements?.reset()
      const dispatch = await createJobs(
        fleet!,
        urls,
        jobTargets,
        jobs,
        IN_FLIGHT,
        () => () => undefined,
        perSecond,
      )
      const written = (await untilDrained(database)) - writtenBefore
      const cpu = cpuPerJob(from, jobs)
      if (statements)
        console.log(
          [
            `PostgreSQL, ${nodeCount} node(s), ${name}:`,
            ...(await statements.top(Number(env.BENCH_PG_STATEMENTS_TOP ?? 12))),
          ].join('\n'),
        )
      const received = receiver.received.slice(firstDelivery)
      return {
        name,
        jobs,
        dispatch,
        cpu,
        ...(received.length > 0 && {
          deliveries: delivered(received, written, startedAt),
        }),
      }
    }
    const baseline = await phase('no endpoint, as fast as taken', JOBS)
    const box = webhookSecretBox(key)
    for (const account of accounts) {
      const endpointId = randomUUID()
      await database.storage.webhooks.createEndpoint(
        account.accountId,
        {
          endpointId,
          url: receiver.url(`/${account.accountId}`),
          eventTypes: JOB_EVENTS,
          description: null,
          sealedSecret: box.seal(secret, endpointId),
        },
        new Date().toISOString(),
      )
    }
    const phases = [baseline]
    const asFast = await phase('every endpoint, as fast as taken', JOBS)
    phases.push(asFast)
    if (SUSTAINED_SHARE > 0) {
      const rate = Math.round(asFast.dispatch.dispatchedPerSecond * SUSTAINED_SHARE)
      phases.push(
        await phase(
          `every endpoint, ${rate} jobs/s (${(SUSTAINED_SHARE * 100).toFixed(0)} % of as fast as taken)`,
          rate * PACED_SECONDS,
          rate,
        ),
      )
    }
    for (const rate of RATES)
      phases.push(await phase(`every endpoint, ${rate} jobs/s`, rate * PACED_SECONDS, rate))
    return { nodes: nodeCount, phases, failedAttempts: await database.failedWebhookAttempts() }
  } finally {
    await stopSetup(fleet, clouds, stops, shared)
  }
}

/** Every hub's printer in the cloud's database (the hubs' state reports applied), as the jobs' targets. */
async function everyPrinterKnown(
  database: BenchDatabase,
  count: number,
  list: () => Promise<JobTarget[]>,
): Promise<JobTarget[]> {
  const deadline = Date.now() + 60_000
  while ((await database.printers()) < count && Date.now() < deadline)
    await new Promise((resolve) => setTimeout(resolve, 200))
  return list()
}

/**
 * Until every delivery written is delivered, and no more were written for a second (the hubs' last reports
 * applied), or the bound; the deliveries written so far.
 */
async function untilDrained(database: BenchDatabase): Promise<number> {
  const deadline = Date.now() + DRAIN_BOUND_MS
  let last = { written: -1, undelivered: -1 }
  for (;;) {
    const now = await database.webhookDeliveries()
    if ((now.undelivered === 0 && now.written === last.written) || Date.now() > deadline) return now.written
    last = now
    await new Promise((resolve) => setTimeout(resolve, now.undelivered === 0 ? 1000 : 50))
  }
}

function delivered(received: ReceivedDelivery[], written: number, startedAt: number): Deliveries {
  const distinct = new Map(received.map((r) => [r.event.id, r]))
  const deliveries = [...distinct.values()].sort(
    (a, b) => Date.parse(a.event.timestamp) - Date.parse(b.event.timestamp),
  )
  const lagOf = (list: typeof deliveries) =>
    summarize(list.map((r) => r.atMs - Date.parse(r.event.timestamp)))
  const tenth = Math.max(1, Math.floor(deliveries.length / 10))
  const lastAt = Math.max(...deliveries.map((r) => r.atMs))
  return {
    written,
    received: deliveries.length,
    receivedAgain: received.length - deliveries.length,
    perSecond: deliveries.length / ((lastAt - startedAt) / 1000),
    lag: lagOf(deliveries),
    firstTenthLag: lagOf(deliveries.slice(0, tenth)),
    lastTenthLag: lagOf(deliveries.slice(-tenth)),
    tenthsP50: Array.from({ length: 10 }, (_, i) => lagOf(deliveries.slice(i * tenth, (i + 1) * tenth)).p50),
  }
}
