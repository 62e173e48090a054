import { randomUUID } from 'node:crypto'
import path from 'node:path'
import autocannon from 'autocannon'
import Database from 'better-sqlite3'
import Fastify from 'fastify'
import { batched } from '../../cloud/storage/batched.ts'
import { DATABASE_FILE } from '../../cloud/storage/storage.ts'
import { ESCPOS_RECEIPT, startTestCloud } from '../cloud/test-cloud.ts'

/**
 * Jobs created per second through POST /api/v1/print-jobs/from-base64 with a small ESC/POS receipt, at 1, 16
 * and 64 concurrent connections, against a minimal Fastify route that parses the same body and answers 201
 * with a job-sized JSON body, in the same run. The ratio says what auth, validation, inspection, storage and
 * the route check cost over bare HTTP + JSON. No hub takes the jobs: a second connection to the database marks
 * them printed every PRINTED_EVERY_MS, as a working printer keeps a queue short. (Left to grow, the queue
 * reached tens of thousands of unfinished jobs, which no account can hold, 1,000 by default, and each insert
 * counted them for the queue's capacity: the figure fell with the run's length.)
 */
const DURATION_SECONDS = Number(process.env.BENCH_DURATION_SECONDS ?? 5)
const CONNECTIONS = [1, 16, 64]
const PRINTED_EVERY_MS = 50

/** Marks every pending job printed, every PRINTED_EVERY_MS; stop() ends it. */
function printerOf(dataDir: string): { stop(): void } {
  const db = new Database(path.join(dataDir, DATABASE_FILE))
  db.pragma('busy_timeout = 5000')
  // The cloud's own writes checkpoint its WAL, as they would if hubs' reports marked the jobs printed.
  db.pragma('wal_autocheckpoint = 0')
  const printed = db.prepare(
    "UPDATE print_jobs SET status = 'printed', completed_at = ? WHERE status = 'pending'",
  )
  const timer = setInterval(() => printed.run(new Date().toISOString()), PRINTED_EVERY_MS)
  return {
    stop() {
      clearInterval(timer)
      db.close()
    },
  }
}

interface Figures {
  rps: number
  p50: number
  p99: number
  non2xx: number
}

async function load(
  url: string,
  connections: number,
  headers: Record<string, string>,
  body: string,
): Promise<Figures> {
  const result = await autocannon({
    url,
    method: 'POST',
    connections,
    duration: DURATION_SECONDS,
    headers: { 'content-type': 'application/json', ...headers },
    body,
    // The load comes from a worker thread, so it does not share the server's event loop.
    workers: 1,
  })
  return {
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    non2xx: result.non2xx + result.errors + result.timeouts,
  }
}

async function minimalServer(sample: unknown): Promise<{ url: string; close(): Promise<void> }> {
  const app = Fastify({ logger: false })
  app.post('/jobs', async (request, reply) => {
    const body = request.body as { printer_id?: string }
    return reply.code(201).send({ ...(sample as object), printer_id: body.printer_id })
  })
  const url = await app.listen({ host: '127.0.0.1', port: 0 })
  return { url: `${url}/jobs`, close: () => app.close() }
}

/**
 * The durable part of a create alone: a route that parses the same body and, for each request, writes copies
 * of `sample`'s document row (with the request's bytes as its content) and job row into the cloud's own
 * database file, with its schema, indexes and triggers and the cloud's settings (WAL, synchronous NORMAL,
 * foreign keys), the rows asked together in one transaction with the cloud's own batching (batched.ts), and
 * answers 201 once they are committed. No token, no printer or queue check, no log: what is left of a create when
 * only its two rows are written.
 */
async function durableRowsServer(
  dataDir: string,
  sample: { id: string; document_id: string },
): Promise<{ url: string; close(): Promise<void> }> {
  const db = new Database(path.join(dataDir, DATABASE_FILE))
  db.pragma('journal_mode = WAL')
  db.pragma('synchronous = NORMAL')
  db.pragma('foreign_keys = ON')
  db.pragma('busy_timeout = 5000')
  /** INSERT … SELECT of a row of `table` with the `given` columns as parameters, in their order. */
  const copy = (table: string, key: string, given: string[]) => {
    const columns = (db.pragma(`table_info(${table})`) as { name: string }[])
      .map((column) => column.name)
      .filter((name) => name !== 'seq')
    const values = columns.map((name) => (given.includes(name) ? `@${name}` : name))
    return db.prepare(
      `INSERT INTO ${table} (${columns.join(', ')}) SELECT ${values.join(', ')} FROM ${table} WHERE ${key} = @template`,
    )
  }
  const copyDocument = copy('documents', 'document_id', ['document_id', 'content', 'created_at'])
  const copyJob = copy('print_jobs', 'print_job_id', ['print_job_id', 'document_id', 'status', 'created_at'])
  interface Rows {
    documentId: string
    jobId: string
    content: Buffer
    createdAt: string
  }
  const commit = db.transaction((rows: readonly Rows[]) => {
    for (const row of rows) {
      copyDocument.run({
        document_id: row.documentId,
        content: row.content,
        created_at: row.createdAt,
        template: sample.document_id,
      })
      copyJob.run({
        print_job_id: row.jobId,
        document_id: row.documentId,
        status: 'pending',
        created_at: row.createdAt,
        template: sample.id,
      })
    }
  })
  // The cloud's own batching (batched.ts): the rows asked together, one transaction.
  const write = batched<Rows, undefined>(
    async (rows) => {
      commit(rows)
      return rows.map(() => undefined)
    },
    { maxBatch: 128 },
  )
  const app = Fastify({ logger: false })
  app.post('/jobs', async (request, reply) => {
    const body = request.body as { printer_id?: string; document_base64: string }
    const row = {
      documentId: randomUUID(),
      jobId: randomUUID(),
      content: Buffer.from(body.document_base64, 'base64'),
      createdAt: new Date().toISOString(),
    }
    await write(row)
    return reply
      .code(201)
      .send({ ...sample, id: row.jobId, document_id: row.documentId, created_at: row.createdAt })
  })
  const url = await app.listen({ host: '127.0.0.1', port: 0 })
  return {
    url: `${url}/jobs`,
    async close() {
      await app.close()
      db.close()
    },
  }
}

export async function benchApiCreateJobs(): Promise<void> {
  const cloud = await startTestCloud({
    env: {
      RATE_LIMIT_PER_IP: '1000000000',
      RATE_LIMIT_PER_ACCOUNT: '1000000000',
      PRINT_QUEUE_CAPACITY: '10000000',
    },
  })
  const account = await cloud.createAccount()
  const body = JSON.stringify({
    document_base64: ESCPOS_RECEIPT.toString('base64'),
    document_format: 'raw',
    document_raw_language: 'escpos',
    printer_id: account.receiptPrinterId,
  })
  const base = await cloud.app.listen({ host: '127.0.0.1', port: 0 })
  const headers = { authorization: `Bearer ${await account.token()}` }
  const sample = await (
    await fetch(`${base}/api/v1/print-jobs/from-base64`, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json' },
      body,
    })
  ).json()
  const minimal = await minimalServer(sample)
  const durable = await durableRowsServer(cloud.dataDir, sample as { id: string; document_id: string })
  const printer = printerOf(cloud.dataDir)
  try {
    console.log(
      `\nfrom-base64 job creation (${DURATION_SECONDS} s per run, ESC/POS payload ${ESCPOS_RECEIPT.length} bytes)`,
    )
    console.log(
      'connections | jobs/s  | p50 ms | p99 ms | minimal route req/s | p50 | p99 | ratio (api/minimal) | two rows alone req/s | ratio (two rows/minimal)',
    )
    for (const connections of CONNECTIONS) {
      const api = await load(`${base}/api/v1/print-jobs/from-base64`, connections, headers, body)
      const bare = await load(minimal.url, connections, {}, body)
      const rows = await load(durable.url, connections, {}, body)
      console.log(
        `${String(connections).padStart(11)} | ${api.rps.toFixed(0).padStart(7)} | ${String(api.p50).padStart(6)} | ${String(api.p99).padStart(6)} | ${bare.rps.toFixed(0).padStart(19)} | ${String(bare.p50).padStart(3)} | ${String(bare.p99).padStart(3)} | ${(api.rps / bare.rps).toFixed(3).padStart(19)} | ${rows.rps.toFixed(0).padStart(20)} | ${(rows.rps / bare.rps).toFixed(3)}`,
      )
      if (api.non2xx > 0 || bare.non2xx > 0 || rows.non2xx > 0)
        console.log(
          `  warning: ${api.non2xx} api, ${bare.non2xx} minimal and ${rows.non2xx} two-row requests failed`,
        )
    }
  } finally {
    printer.stop()
    await durable.close()
    await minimal.close()
    await cloud.close()
  }
}
