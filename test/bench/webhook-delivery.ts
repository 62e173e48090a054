import { spawn } from 'node:child_process'
import { randomBytes, randomUUID } from 'node:crypto'
import path from 'node:path'
import { pino } from 'pino'
import { JOB_RULES } from '../../cloud/print-jobs/lifecycle.ts'
import { openStorage, type Storage, type StorageSettings } from '../../cloud/storage/storage.ts'
import { DeliveryWorker } from '../../cloud/webhooks/delivery-worker.ts'
import { storedEventSubjects } from '../../cloud/webhooks/event-payload.ts'
import { newWebhookSecret, webhookSecretBox } from '../../cloud/webhooks/secret-box.ts'
import type { PrintJob } from '../../protocol/print-job.ts'
import type { WebhookEventType } from '../../protocol/webhooks.ts'
import { storeJob } from '../cloud/storage/stored-jobs.ts'
import { RECEIPT_PRINTER } from '../cloud/test-cloud.ts'
import { type ReceiverReach, startWebhookReceiver, type WebhookReceiver } from '../cloud/webhooks/receiver.ts'
import { startPostgres } from '../helpers/postgres-server.ts'
import { tempDir } from '../helpers/temp-dir.ts'
import { formatSummary, nowMs, summarize } from './stats.ts'

const NODE_SCRIPT = path.join(import.meta.dirname, 'webhook-node.ts')
const LATENCY_JOBS = Number(process.env.BENCH_WEBHOOK_LATENCY_JOBS ?? 300)
const LATENCY_JOBS_PER_SECOND = Number(process.env.BENCH_WEBHOOK_JOBS_PER_SECOND ?? 50)
const BACKLOG_JOBS = Number(process.env.BENCH_WEBHOOK_BACKLOG_JOBS ?? 1200)
/** Accounts, each with one endpoint taking its jobs' four statuses: every delivery is an event of its own. */
const BACKLOG_ENDPOINTS = Number(process.env.BENCH_WEBHOOK_ENDPOINTS ?? 4)
/** Flags for the node processes, such as `--cpu-prof --cpu-prof-dir=DIR` to see where a delivery's time goes. */
const NODE_FLAGS = (process.env.BENCH_WEBHOOK_NODE_FLAGS ?? '').split(' ').filter(Boolean)
const JOB_EVENTS: WebhookEventType[] = [
  'print_job.pending',
  'print_job.reserved',
  'print_job.printing',
  'print_job.printed',
]

/**
 * Webhook deliveries (docs/webhooks.md), storage and delivery worker in this process, the receiver a real
 * HTTPS server on 127.0.0.1 that verifies every signature with the standardwebhooks library:
 * 1. lag: jobs taken to `printed` at a steady rate; from each `printed` committed to its `print_job.printed`
 *    received (SQLite, one node; the worker nudged after each change, as the dispatcher nudges it);
 * 2. throughput: a backlog of jobs' four status events, the jobs of several accounts each with one endpoint
 *    (so each delivery renders its own event), drained by one node on SQLite, then by one and by two nodes
 *    (each a process of its own, webhook-node.ts) on one PostgreSQL database; beside the rate at which this
 *    process took the jobs through their statuses, one after the other, writing the events.
 */
export async function benchWebhookDelivery(): Promise<void> {
  const secret = newWebhookSecret()
  const receiver = await startWebhookReceiver(() => secret)
  const postgres = await startPostgres()
  try {
    console.log('webhook deliveries')
    const sqliteDir = tempDir('bench-webhooks-')
    try {
      await withShop({ dataDir: sqliteDir.path }, secret, receiver, async (shop) => {
        const lag = await measureLag(shop)
        console.log(`  printed → delivered, SQLite, ${LATENCY_JOBS_PER_SECOND} jobs/s: ${formatSummary(lag)}`)
      })
    } finally {
      sqliteDir.remove()
    }
    for (const [engine, nodes] of [
      ['SQLite', 1],
      ['PostgreSQL', 1],
      ['PostgreSQL', 2],
    ] as const) {
      const dir = tempDir('bench-webhooks-')
      try {
        const settings =
          engine === 'SQLite'
            ? { dataDir: dir.path }
            : { dataDir: dir.path, databaseUrl: await postgres.createDatabase() }
        await withShop(settings, secret, receiver, async (shop) => {
          const { perSecond, written } = await measureDrain(shop, settings, nodes)
          const jobs = (deliveries: number) => (deliveries / JOB_EVENTS.length).toFixed(0)
          console.log(
            `  backlog of ${BACKLOG_JOBS} jobs' four statuses to ${BACKLOG_ENDPOINTS} accounts' endpoints, ${engine}, ${nodes} node(s): ` +
              `${perSecond.toFixed(0)} deliveries/s (${jobs(perSecond)} jobs/s); written while the jobs ran ` +
              `${written.toFixed(0)} deliveries/s (${jobs(written)} jobs/s): ratio ${(perSecond / written).toFixed(2)}`,
          )
        })
      } finally {
        dir.remove()
      }
    }
  } finally {
    await postgres.stop()
    await receiver.close()
  }
}

/** A customer of the cloud: its account and the printer its jobs go to. */
interface Customer {
  accountId: string
  printerId: string
}

interface Shop {
  storage: Storage
  /** BACKLOG_ENDPOINTS customers, each with a hub and a printer. */
  customers: Customer[]
  receiver: WebhookReceiver
  box: ReturnType<typeof webhookSecretBox>
  /** The box's key, for the node processes. */
  key: Buffer
  secret: string
}

async function withShop(
  settings: StorageSettings,
  secret: string,
  receiver: WebhookReceiver,
  run: (shop: Shop) => Promise<void>,
): Promise<void> {
  const storage = await openStorage(settings)
  try {
    const customers: Customer[] = []
    for (let i = 0; i < BACKLOG_ENDPOINTS; i++) {
      const accountId = (await storage.accounts.create(`Bench shop ${i}`)).account_id
      const agent = await storage.agents.insert({ account_id: accountId, name: 'hub', online: true })
      const printer = await storage.printers.insert({
        account_id: accountId,
        agent_id: agent.agent_id,
        name: 'Receipts',
        capabilities: RECEIPT_PRINTER,
        reported: true,
      })
      customers.push({ accountId, printerId: printer.printer_id })
    }
    receiver.received.length = 0
    const key = randomBytes(32)
    await run({
      storage,
      customers,
      receiver,
      box: webhookSecretBox(key),
      key,
      secret,
    })
  } finally {
    await storage.close()
  }
}

async function addEndpoint(
  shop: Shop,
  { accountId }: Customer,
  eventTypes: WebhookEventType[],
): Promise<void> {
  const endpointId = randomUUID()
  await shop.storage.webhooks.createEndpoint(
    accountId,
    {
      endpointId,
      url: shop.receiver.url(`/bench/${endpointId}`),
      eventTypes,
      description: null,
      sealedSecret: shop.box.seal(shop.secret, endpointId),
    },
    new Date().toISOString(),
  )
}

function worker(shop: Shop, storage = shop.storage): DeliveryWorker {
  return new DeliveryWorker({
    webhooks: storage.webhooks,
    subjects: storedEventSubjects(storage),
    secretBox: shop.box,
    logger: pino({ level: 'silent' }),
    fetchSeams: shop.receiver.fetchSeams,
  })
}

/** A job on the customer's printer taken through every status to `printed`; when `printed` was committed. */
async function printJob(
  { storage }: Shop,
  { accountId, printerId }: Customer,
): Promise<{ printJobId: string; printedAtMs: number }> {
  const now = () => new Date().toISOString()
  const job = await storeJob(storage, accountId, printerId)
  const apply = (rule: keyof typeof JOB_RULES, change: object) =>
    storage.printJobs.apply(job.print_job_id, JOB_RULES[rule], change)
  await apply('offer', { offered_at: now() })
  await apply('reserve', { reserved_at: now() })
  await apply('start', { started_at: now() })
  await apply('print', { completed_at: now() })
  return { printJobId: job.print_job_id, printedAtMs: Date.now() }
}

async function measureLag(shop: Shop) {
  const customer = shop.customers[0]!
  await addEndpoint(shop, customer, ['print_job.printed'])
  const delivering = worker(shop)
  delivering.start()
  const printedAt = new Map<string, number>()
  try {
    const started = nowMs()
    for (let i = 0; i < LATENCY_JOBS; i++) {
      const wait = started + (i * 1000) / LATENCY_JOBS_PER_SECOND - nowMs()
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait))
      const { printJobId, printedAtMs } = await printJob(shop, customer)
      // As the dispatcher does after a hub's report applied (cloud/server.ts, jobChanged).
      delivering.nudge()
      printedAt.set(printJobId, printedAtMs)
    }
    while (shop.receiver.received.length < LATENCY_JOBS)
      await new Promise((resolve) => setTimeout(resolve, 20))
  } finally {
    await delivering.stop()
  }
  const arrivals = new Map(
    shop.receiver.received.map((r) => [(r.event.data as PrintJob).print_job_id, r.atMs]),
  )
  shop.receiver.received.length = 0
  return summarize([...printedAt].map(([id, at]) => (arrivals.get(id) as number) - at))
}

/** Deliveries per second, from the workers' start to the last delivery of the backlog. */
async function measureDrain(
  shop: Shop,
  settings: StorageSettings,
  nodes: number,
): Promise<{ perSecond: number; written: number }> {
  for (const customer of shop.customers) await addEndpoint(shop, customer, JOB_EVENTS)
  const expected = BACKLOG_JOBS * JOB_EVENTS.length
  // The baseline: how fast this storage takes jobs through their statuses one after the other, writing the
  // deliveries the workers then drain.
  const writing = nowMs()
  for (let i = 0; i < BACKLOG_JOBS; i++) await printJob(shop, shop.customers[i % shop.customers.length]!)
  const written = expected / ((nowMs() - writing) / 1000)
  // Each node a process of its own (webhook-node.ts), as cloud nodes are: this process only writes the jobs and
  // receives. The rate is taken from the first delivery received to the last: a process's start is not in it.
  const processes = await Promise.all(
    Array.from({ length: nodes }, () => startNode(settings, shop.key, shop.receiver.reach)),
  )
  try {
    while (shop.receiver.received.length < expected) await new Promise((resolve) => setTimeout(resolve, 20))
    const arrivals = shop.receiver.received.map((r) => r.atMs)
    const seconds = (Math.max(...arrivals) - Math.min(...arrivals)) / 1000
    const ids = new Set(shop.receiver.received.map((r) => `${r.path} ${r.event.id}`))
    if (ids.size !== expected)
      throw new Error(`${expected} deliveries expected, ${ids.size} distinct received`)
    return { perSecond: (expected - 1) / seconds, written }
  } finally {
    await Promise.all(processes.map((node) => node.stop()))
    shop.receiver.received.length = 0
  }
}

/** A delivery node in its own process; resolves once it works. */
async function startNode(settings: StorageSettings, key: Buffer, reach: ReceiverReach) {
  const child = spawn(
    process.execPath,
    [
      ...NODE_FLAGS,
      '--import',
      'tsx',
      NODE_SCRIPT,
      JSON.stringify({ settings, key: key.toString('base64'), reach }),
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  )
  let stopping = false
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  void exited.then(() => {
    if (!stopping)
      console.error(`  a webhook node exited by itself (${child.exitCode}): the figures below are void`)
  })
  await new Promise<void>((resolve, reject) => {
    child.stdout.on('data', (chunk: Buffer) => {
      if (chunk.toString().includes('ready')) resolve()
    })
    child.once('exit', (code) => reject(new Error(`webhook node exited (${code}) before it was ready`)))
  })
  return {
    async stop() {
      stopping = true
      if (child.exitCode === null) child.kill('SIGTERM')
      await exited
    },
  }
}
