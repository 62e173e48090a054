import pg from 'pg'
import { openDatabase } from '../../cloud/storage/database.ts'
import { startPostgres } from '../helpers/postgres-server.ts'
import { cpuSecondsOf } from './process-cpu.ts'

const JOBS = Number(process.env.BENCH_TRIGGER_JOBS ?? 6000)
const ROUNDS = Number(process.env.BENCH_TRIGGER_ROUNDS ?? 3)
/** The last migration with a trigger per row for print jobs' webhook events; later ones write them per statement. */
const PER_ROW_SCHEMA = 24
const STATUSES = ['pending', 'reserved', 'printed'] as const
const AT = '2026-11-29T08:00:00.000Z'

interface Case {
  schema: 'per row' | 'per statement'
  endpoint: boolean
  /** Jobs per statement, each statement its own transaction: 12 is a lifecycle batch under load, 1 a quiet cloud. */
  batch: number
}

/**
 * What a print job's webhook events cost PostgreSQL (docs/performance.md, "Webhook deliveries": a job's
 * events written per statement): the CPU of the database's backend per job for the job's three row writes (the insert, then
 * `reserved` and `printed`, each statement a transaction), with the triggers of migration 24 (per row) and of
 * the newest schema (per statement), for an account with no endpoint and with one endpoint taking the three
 * statuses, at 12 and at 1 job per statement. Each case runs on a fresh database, the cases alternating,
 * ROUNDS times; the figure is the median. The database server is otherwise idle, durability off as in tests.
 */
export async function benchJobEventTriggers(): Promise<void> {
  const postgres = await startPostgres()
  try {
    const cases: Case[] = []
    for (const batch of [12, 1])
      for (const endpoint of [false, true])
        for (const schema of ['per row', 'per statement'] as const) cases.push({ schema, endpoint, batch })
    const results = new Map<Case, number[]>(cases.map((c) => [c, []]))
    for (let round = 0; round < ROUNDS; round++)
      for (const c of cases) results.get(c)!.push(await microsecondsPerJob(postgres, c))
    console.log(
      `job event triggers: PostgreSQL backend CPU per job for its insert and two status changes, ${JOBS} jobs, median of ${ROUNDS}`,
    )
    for (const c of cases) {
      if (c.schema !== 'per statement') continue
      const now = median(results.get(c)!)
      const before = median(
        results.get(
          cases.find((b) => b.schema === 'per row' && b.endpoint === c.endpoint && b.batch === c.batch)!,
        )!,
      )
      console.log(
        `  ${c.batch} job(s) per statement, ${c.endpoint ? 'one endpoint taking each status' : 'no endpoint'}: ` +
          `${now.toFixed(0)} µs a job with the triggers per statement, ${before.toFixed(0)} µs per row (${(now / before).toFixed(2)}x)`,
      )
    }
  } finally {
    await postgres.stop()
  }
}

async function microsecondsPerJob(postgres: Awaited<ReturnType<typeof startPostgres>>, c: Case) {
  const url = await postgres.createDatabase()
  try {
    const opened = await openDatabase(
      { postgresUrl: url },
      c.schema === 'per row' ? { targetVersion: PER_ROW_SCHEMA } : {},
    )
    await opened.close()
    const client = new pg.Client({ connectionString: url })
    await client.connect()
    try {
      await shop(client, c.endpoint)
      const { rows } = await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')
      const backend = rows[0]!.pid
      const ids = Array.from({ length: JOBS }, (_, i) => `job-${i}`)
      const from = cpuSecondsOf(backend)
      for (const status of STATUSES)
        for (let i = 0; i < JOBS; i += c.batch) {
          const chunk = ids.slice(i, i + c.batch)
          await client.query('BEGIN')
          if (status === 'pending')
            await client.query(
              `INSERT INTO print_jobs (print_job_id, account_id, document_id, printer_id, status, options, created_at)
               VALUES ${chunk.map((_, j) => `($${j + 2}, 'account', 'document', 'printer', 'pending', '{}', $1)`).join(', ')}`,
              [AT, ...chunk],
            )
          else
            await client.query('UPDATE print_jobs SET status = $1 WHERE print_job_id = ANY($2)', [
              status,
              chunk,
            ])
          await client.query('COMMIT')
        }
      const used = cpuSecondsOf(backend) - from
      const { rows: written } = await client.query<{ n: string }>(
        'SELECT count(*) AS n FROM webhook_deliveries',
      )
      if (Number(written[0]!.n) !== (c.endpoint ? JOBS * STATUSES.length : 0))
        throw new Error(`${written[0]!.n} deliveries written for ${JOBS} jobs`)
      return (used * 1e6) / JOBS
    } finally {
      await client.end()
    }
  } finally {
    await postgres.dropDatabase(url)
  }
}

/** An account with a hub, a printer and a document, and with `endpoint` one endpoint taking the three statuses. */
async function shop(client: pg.Client, endpoint: boolean) {
  await client.query(`INSERT INTO accounts (account_id, name, created_at) VALUES ('account', 'Shop', $1)`, [
    AT,
  ])
  await client.query(
    `INSERT INTO agents (agent_id, account_id, name, created_at, online) VALUES ('hub', 'account', 'Hub', $1, 1)`,
    [AT],
  )
  await client.query(
    `INSERT INTO printers (printer_id, account_id, agent_id, name, capabilities, created_at, printer_key, reported)
     VALUES ('printer', 'account', 'hub', 'Receipts', '{}', $1, 'usb-1', 1)`,
    [AT],
  )
  await client.query(
    `INSERT INTO documents (document_id, account_id, mime_type, format, size_bytes, sha256, created_at)
     VALUES ('document', 'account', 'application/vnd.escpos', 'raw', 1, 'sha', $1)`,
    [AT],
  )
  if (!endpoint) return
  await client.query(
    `INSERT INTO webhook_endpoints (endpoint_id, account_id, url, secret, enabled, created_at, updated_at)
     VALUES ('endpoint', 'account', 'https://hooks.example.com/print', 'sealed', 1, $1, $1)`,
    [AT],
  )
  for (const status of STATUSES)
    await client.query(
      `INSERT INTO webhook_subscriptions (endpoint_id, account_id, event_type) VALUES ('endpoint', 'account', $1)`,
      [`print_job.${status}`],
    )
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)]!
}
