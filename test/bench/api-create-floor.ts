import path from 'node:path'
import Database from 'better-sqlite3'
import Fastify from 'fastify'
import { batched } from '../../cloud/storage/batched.ts'
import { DATABASE_FILE } from '../../cloud/storage/storage.ts'
import { timeOrderedUuid } from '../../cloud/uuid.ts'
import { hashSecret } from '../../print-api/secrets.ts'

/**
 * Floors for job creation through the API (api-create-jobs.ts), measured beside it: Fastify routes that parse
 * the same body and write a create's rows into the cloud's own database file (its schema, indexes and
 * triggers, and the cloud's settings: WAL, synchronous NORMAL, foreign keys), the rows asked in one turn
 * written in one transaction with the cloud's own batching (batched.ts), answering 201 once committed.
 *
 * - `rows`: the document's row (with the request's bytes) and the job's row, nothing else;
 * - `checked`: those rows and the statements the API's promises need for them, as the cloud sends them: the
 *   bearer token's row (every request authenticated, its account active), the printer's row and its hub's
 *   presence (the printer must be the account's), the account's stored bytes before the document is taken
 *   and, in the transaction, the conditional count within its storage quota, and the account's unfinished
 *   jobs against its queue capacity. The token and printer reads are one statement a turn, as the cloud's
 *   lookups are.
 *
 * No schema validation, no document inspection, no idempotency key, no log, no offer: what is left of a create
 * when only its rows, and then its rows and checks, are done.
 */
export interface CreateFloor {
  url: string
  close(): Promise<void>
}

/** A job as the API answered it: the rows are copies of its document's and its own. */
export interface SampleJob {
  print_job_id: string
  document_id: string
  printer_id: string
}

interface Rows {
  accountId: string
  documentId: string
  jobId: string
  content: Buffer
  createdAt: string
}

const UNFINISHED = "('pending', 'reserved', 'printing')"

export async function createFloorServer(
  dataDir: string,
  sample: SampleJob,
  kind: 'rows' | 'checked',
  accountId: string,
  queueCapacity: number,
  quotaBytes: number,
): Promise<CreateFloor> {
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
  const copyDocument = copy('documents', 'document_id', [
    'document_id',
    'content',
    'size_bytes',
    'created_at',
  ])
  const copyJob = copy('print_jobs', 'print_job_id', ['print_job_id', 'document_id', 'status', 'created_at'])
  const tokenRow = db.prepare(
    `SELECT t.token_hash, t.account_id, t.client_id, t.scopes, t.expires_at FROM access_tokens t
     JOIN api_clients c ON c.client_id = t.client_id JOIN accounts a ON a.account_id = t.account_id
     WHERE t.token_hash = ? AND c.revoked_at IS NULL AND a.state = 'active'`,
  )
  const printerRow = db.prepare(
    `SELECT account_id, printer_key, capabilities,
       CASE WHEN reported = 1 THEN (SELECT online FROM agents WHERE agents.agent_id = printers.agent_id) ELSE 0 END AS online
     FROM printers WHERE printer_id = ? AND removed_at IS NULL`,
  )
  const storedBytes = db.prepare('SELECT retained_bytes FROM account_storage WHERE account_id = ?')
  const storageRow = db.prepare(
    'INSERT INTO account_storage (account_id, retained_bytes) VALUES (?, 0) ON CONFLICT DO NOTHING',
  )
  const countBytes = db.prepare(
    'UPDATE account_storage SET retained_bytes = retained_bytes + @size WHERE account_id = @account AND retained_bytes + @size <= @quota',
  )
  const unfinished = db.prepare(
    `SELECT count(*) AS n FROM (SELECT seq FROM print_jobs WHERE account_id = ? AND status IN ${UNFINISHED} LIMIT ?)`,
  )
  const commit = db.transaction((rows: readonly Rows[]) => {
    if (kind === 'checked') {
      for (const row of rows) {
        storageRow.run(row.accountId)
        const counted = countBytes.run({
          size: row.content.length,
          account: row.accountId,
          quota: quotaBytes,
        })
        if (counted.changes !== 1) throw new Error('the storage quota refused a document')
      }
      const queued = (unfinished.get(accountId, queueCapacity) as { n: number }).n
      if (queued + rows.length > queueCapacity) throw new Error('the queue is full')
    }
    for (const row of rows) {
      const document = copyDocument.run({
        document_id: row.documentId,
        content: row.content,
        size_bytes: row.content.length,
        created_at: row.createdAt,
        template: sample.document_id,
      })
      const job = copyJob.run({
        print_job_id: row.jobId,
        document_id: row.documentId,
        status: 'pending',
        created_at: row.createdAt,
        template: sample.print_job_id,
      })
      if (document.changes !== 1 || job.changes !== 1) throw new Error('a row was not written')
    }
  })
  const write = batched<Rows, undefined>(
    async (rows) => {
      commit(rows)
      return rows.map(() => undefined)
    },
    { maxBatch: 128 },
  )
  /** One statement a turn for the keys asked in it, as the cloud's lookups (batchedLookup). */
  const lookup = <T>(statement: Database.Statement) =>
    batched<T, unknown>(
      async (keys) => {
        const rows = new Map<T, unknown>()
        for (const key of keys) if (!rows.has(key)) rows.set(key, statement.get(key))
        return keys.map((key) => rows.get(key))
      },
      { maxBatch: 128 },
    )
  const tokenOf = lookup<Buffer>(tokenRow)
  const printerOf = lookup<string>(printerRow)
  const app = Fastify({ logger: false })
  app.post('/jobs', async (request, reply) => {
    const body = request.body as { printer_id: string; document_base64: string }
    const content = Buffer.from(body.document_base64, 'base64')
    if (kind === 'checked') {
      const bearer = (request.headers.authorization ?? '').slice('Bearer '.length)
      const token = (await tokenOf(hashSecret(bearer))) as { account_id: string } | undefined
      if (token?.account_id !== accountId) return reply.code(401).send({ error: 'unauthorized' })
      const printer = (await printerOf(body.printer_id)) as { account_id: string } | undefined
      if (printer?.account_id !== accountId) return reply.code(422).send({ error: 'validation_failed' })
      const stored = storedBytes.get(accountId) as { retained_bytes: number } | undefined
      if ((stored?.retained_bytes ?? 0) + content.length > quotaBytes)
        return reply.code(413).send({ error: 'payload_too_large' })
    }
    const row = {
      accountId,
      documentId: timeOrderedUuid(),
      jobId: timeOrderedUuid(),
      content,
      createdAt: new Date().toISOString(),
    }
    await write(row)
    return reply
      .code(201)
      .send({ ...sample, print_job_id: row.jobId, document_id: row.documentId, created_at: row.createdAt })
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
