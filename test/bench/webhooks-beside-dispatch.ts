import { randomBytes, randomUUID } from 'node:crypto'
import path from 'node:path'
import { newWebhookSecret, webhookSecretBox } from '../../cloud/webhooks/secret-box.ts'
import type { WebhookEventType } from '../../protocol/webhooks.ts'
import { startWebhookReceiver, type WebhookReceiver } from '../cloud/webhooks/receiver.ts'
import { type CloudProcess, startCloudProcess, stopAll } from '../e2e/harness.ts'
import { startPostgres } from '../helpers/postgres-server.ts'
import { startRedisServer } from '../helpers/redis-server.ts'
import { tempDir } from '../helpers/temp-dir.ts'
import { CLOUD_ENV, logins, PRINTER, raiseOpenFileLimit, stopGracefully, targets } from './multi-node.ts'
import { startBenchMosquitto } from './multi-node-broker.ts'
import { type BenchDatabase, openBenchDatabase } from './multi-node-database.ts'
import { createJobs, type Dispatch, type JobTarget } from './multi-node-dispatch.ts'
import { type Fleet, startFleet } from './multi-node-fleet.ts'
import { createAccounts, enrollHubs } from './multi-node-provision.ts'
import { cpuSecondsOf } from './process-cpu.ts'
import { formatSummary, type Summary, summarize } from './stats.ts'

/**
 * Webhook deliveries beside dispatch (issue 29): the cluster of the multi-node benchmark (Mosquitto, PostgreSQL,
 * Redis; one node, then two), its simulated hubs taking each offer and reporting it printed, jobs created
 * through the API as fast as the cluster takes them. First with no webhook endpoint (the baseline: what the
 * cloud sustains), then with every account's endpoint taking its jobs' status events (`pending`, `reserved`,
 * `printed`: the simulated hubs report no `printing`), delivered by the same nodes to a receiver on 127.0.0.1
 * that verifies each signature (receiver.ts). Deliveries keep up when the events of the last jobs arrive as
 * soon after their change as those of the first.
 */
const env = process.env
const HUBS = Number(env.BENCH_BESIDE_HUBS ?? 600)
const JOBS = Number(env.BENCH_BESIDE_JOBS ?? 6000)
const ACCOUNTS = Number(env.BENCH_BESIDE_ACCOUNTS ?? 100)
const NODES = (env.BENCH_BESIDE_NODES ?? '1,2').split(',').map(Number)
const IN_FLIGHT = 32
const JOB_EVENTS: WebhookEventType[] = [
  'print_job.pending',
  'print_job.reserved',
  'print_job.printing',
  'print_job.printed',
]
/** The events each job makes: the simulated hubs go from `reserved` to `printed`. */
const EVENTS_PER_JOB = 3
/** How long deliveries may trail the last job before the run stops waiting for them. */
const DRAIN_BOUND_MS = 120_000
const progress = (what: string) => process.stderr.write(`webhooks beside dispatch: ${what}\n`)

interface Figures {
  nodes: number
  baseline: Dispatch
  withWebhooks: Dispatch
  /** CPU milliseconds per job of the cloud's processes (nodes, Mosquitto, PostgreSQL), in each phase. */
  baselineCpuMs: number
  withWebhooksCpuMs: number
  deliveries: number
  expected: number
  /** Deliveries per second, from the first job request to the last delivery. */
  deliveredPerSecond: number
  /** Each delivery's arrival after its event's change (the event's timestamp, the cloud's clock). */
  lag: Summary
  /** The lag of the deliveries of the first and of the last tenth of the events, by their time. */
  firstTenthLag: Summary
  lastTenthLag: Summary
}

export async function benchWebhooksBesideDispatch(): Promise<void> {
  raiseOpenFileLimit()
  const lines = [
    '',
    `webhooks beside dispatch: ${HUBS} simulated hubs of ${ACCOUNTS} accounts, Mosquitto, PostgreSQL, Redis; ${JOBS} jobs`,
    `  created through the API (${IN_FLIGHT} requests in flight per node), first with no webhook endpoint, then with`,
    `  every account's endpoint taking its jobs' status events (${EVENTS_PER_JOB} a job), delivered by the same nodes`,
  ]
  const runs: Figures[] = []
  for (const nodes of NODES) runs.push(await run(nodes))
  for (const f of runs) {
    lines.push(
      `  ${f.nodes} node(s): dispatched ${f.baseline.dispatchedPerSecond.toFixed(0)} jobs/s with no endpoint (baseline), ` +
        `${f.withWebhooks.dispatchedPerSecond.toFixed(0)} jobs/s with the endpoints (ratio ${(f.withWebhooks.dispatchedPerSecond / f.baseline.dispatchedPerSecond).toFixed(2)})`,
      `    the cloud's CPU per job (nodes, Mosquitto, PostgreSQL): ${f.baselineCpuMs.toFixed(2)} ms with no endpoint, ${f.withWebhooksCpuMs.toFixed(2)} ms with them`,
      `    deliveries: ${f.deliveries} of ${f.expected}, ${f.deliveredPerSecond.toFixed(0)}/s (${(f.deliveredPerSecond / EVENTS_PER_JOB).toFixed(0)} jobs' worth/s), first request → last delivery`,
      `    change → delivery, every event:      ${formatSummary(f.lag)}`,
      `    change → delivery, first 10 % of events: ${formatSummary(f.firstTenthLag)}`,
      `    change → delivery, last 10 % of events:  ${formatSummary(f.lastTenthLag)}`,
    )
  }
  for (const line of lines) console.log(line)
}

async function run(nodeCount: number): Promise<Figures> {
  const shared = tempDir('bench-beside-')
  const postgres = await startPostgres()
  const stops: (() => Promise<void>)[] = [() => postgres.stop()]
  const secret = newWebhookSecret()
  const receiver = await startWebhookReceiver(() => secret)
  stops.push(() => receiver.close())
  let fleet: Fleet | undefined
  const clouds: CloudProcess[] = []
  try {
    const databaseUrl = await postgres.createDatabase()
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
    const cloudCpu = () =>
      [...nodes.map((n) => n.process.pid!), mosquitto.pid()].reduce(
        (sum, pid) => sum + cpuSecondsOf(pid),
        cpuSecondsOf(postgres.pid, true),
      )
    const cpuMsPerJob = (from: number) => ((cloudCpu() - from) * 1000) / JOBS
    progress(`${nodeCount} node(s): ${JOBS} jobs with no endpoint`)
    const baselineFrom = cloudCpu()
    const baseline = await createJobs(fleet, urls, jobTargets, JOBS, IN_FLIGHT, () => () => undefined)
    // The baseline's last jobs are reported printed before any endpoint exists: none of their events is delivered.
    await new Promise((resolve) => setTimeout(resolve, 2000))
    const baselineCpuMs = cpuMsPerJob(baselineFrom)
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
    progress(`${nodeCount} node(s): ${JOBS} jobs with every account's endpoint`)
    const startedAt = Date.now()
    const withWebhooksFrom = cloudCpu()
    const withWebhooks = await createJobs(fleet, urls, jobTargets, JOBS, IN_FLIGHT, () => () => undefined)
    const expected = JOBS * EVENTS_PER_JOB
    await untilDrained(receiver, expected)
    await new Promise((resolve) => setTimeout(resolve, 2000))
    const withWebhooksCpuMs = cpuMsPerJob(withWebhooksFrom)
    return {
      nodes: nodeCount,
      baseline,
      withWebhooks,
      baselineCpuMs,
      withWebhooksCpuMs,
      expected,
      ...delivered(receiver, startedAt),
    }
  } finally {
    await fleet?.stop()
    await stopGracefully(clouds)
    await stopAll()
    for (const stop of stops.reverse()) await stop().catch(() => {})
    shared.remove()
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

/** Until `expected` deliveries arrived, or none arrived for a while past the bound. */
async function untilDrained(receiver: WebhookReceiver, expected: number): Promise<void> {
  const deadline = Date.now() + DRAIN_BOUND_MS
  while (receiver.received.length < expected && Date.now() < deadline)
    await new Promise((resolve) => setTimeout(resolve, 50))
}

function delivered(receiver: WebhookReceiver, startedAt: number) {
  const distinct = new Map(receiver.received.map((r) => [r.event.id, r]))
  const deliveries = [...distinct.values()].sort(
    (a, b) => Date.parse(a.event.timestamp) - Date.parse(b.event.timestamp),
  )
  const lagOf = (list: typeof deliveries) =>
    summarize(list.map((r) => r.atMs - Date.parse(r.event.timestamp)))
  const tenth = Math.max(1, Math.floor(deliveries.length / 10))
  const lastAt = Math.max(...deliveries.map((r) => r.atMs))
  return {
    deliveries: deliveries.length,
    deliveredPerSecond: deliveries.length / ((lastAt - startedAt) / 1000),
    lag: lagOf(deliveries),
    firstTenthLag: lagOf(deliveries.slice(0, tenth)),
    lastTenthLag: lagOf(deliveries.slice(-tenth)),
  }
}
