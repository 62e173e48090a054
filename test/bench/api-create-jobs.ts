import path from 'node:path'
import autocannon from 'autocannon'
import Database from 'better-sqlite3'
import Fastify from 'fastify'
import { DATABASE_FILE } from '../../cloud/storage/storage.ts'
import { ESCPOS_RECEIPT, startTestCloud } from '../cloud/test-cloud.ts'
import { createFloorServer, type SampleJob } from './api-create-floor.ts'

/**
 * Jobs created per second through POST /api/v1/print-jobs/from-base64 with a small ESC/POS receipt, at 1, 16
 * and 64 concurrent connections, against a minimal Fastify route that parses the same body and answers 201
 * with a job-sized JSON body, in the same run. The ratio says what auth, validation, inspection, storage and
 * the route check cost over bare HTTP + JSON. No hub takes the jobs: a second connection to the database marks
 * them printed every PRINTED_EVERY_MS, as a working printer keeps a queue short. (Left to grow, the queue
 * reached tens of thousands of unfinished jobs, which no account can hold, 1,000 by default, and each insert
 * counted them for the queue's capacity: the figure fell with the run's length.) Two floors run in the same
 * run (api-create-floor.ts): the create's two rows alone, and its rows with the reads and checks its promises
 * need.
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
  const floor = (kind: 'rows' | 'checked') =>
    createFloorServer(
      cloud.dataDir,
      sample as SampleJob,
      kind,
      account.accountId,
      cloud.config.printQueueCapacity,
      cloud.config.accountStorageQuotaBytes,
    )
  const rowsOnly = await floor('rows')
  const checked = await floor('checked')
  const printer = printerOf(cloud.dataDir)
  try {
    console.log(
      `\nfrom-base64 job creation (${DURATION_SECONDS} s per run, ESC/POS payload ${ESCPOS_RECEIPT.length} bytes)`,
    )
    console.log(
      'connections | jobs/s  | p50 ms | p99 ms | minimal route req/s | p50 | p99 | ratio (api/minimal) | two rows alone req/s | ratio | rows and checks req/s | ratio',
    )
    for (const connections of CONNECTIONS) {
      const api = await load(`${base}/api/v1/print-jobs/from-base64`, connections, headers, body)
      const bare = await load(minimal.url, connections, {}, body)
      const rows = await load(rowsOnly.url, connections, {}, body)
      const rowsAndChecks = await load(checked.url, connections, headers, body)
      const ratio = (figures: Figures) => (figures.rps / bare.rps).toFixed(3)
      console.log(
        `${String(connections).padStart(11)} | ${api.rps.toFixed(0).padStart(7)} | ${String(api.p50).padStart(6)} | ${String(api.p99).padStart(6)} | ${bare.rps.toFixed(0).padStart(19)} | ${String(bare.p50).padStart(3)} | ${String(bare.p99).padStart(3)} | ${ratio(api).padStart(19)} | ${rows.rps.toFixed(0).padStart(20)} | ${ratio(rows)} | ${rowsAndChecks.rps.toFixed(0).padStart(21)} | ${ratio(rowsAndChecks)}`,
      )
      const failed = [api, bare, rows, rowsAndChecks].map((figures) => figures.non2xx)
      if (failed.some((count) => count > 0))
        console.log(
          `  warning: requests failed: ${failed[0]} api, ${failed[1]} minimal, ${failed[2]} two rows, ${failed[3]} rows and checks`,
        )
    }
  } finally {
    printer.stop()
    await checked.close()
    await rowsOnly.close()
    await minimal.close()
    await cloud.close()
  }
}
