import { type Kysely, sql } from 'kysely'
import type { PrintJobStatus } from '../../protocol/enums.ts'
import { PRINT_OPTION_KEYS, type PrintJob } from '../../protocol/print-job.ts'
import { batchedOn, powersOfTwo } from './batched.ts'
import { inTransaction, type Sql } from './engine.ts'
import type { IdempotencyScope } from './idempotency.ts'
import type { Database } from './schema.ts'

/** The answer an Idempotency-Key replays: written in the transaction that inserts the job. */
export interface IdempotentAnswer {
  scope: IdempotencyScope
  statusCode: number
  body: string
}

/** One job to insert (PrintJobRepository.insertWithinCapacity). */
interface JobInsert {
  accountId: string
  job: PrintJob
  capacity: number
  answer: IdempotentAnswer | undefined
}

const UNFINISHED: readonly PrintJobStatus[] = ['pending', 'reserved', 'printing']

/** Jobs per transaction at most (11 parameters a row: far under either engine's bound). */
const MAX_BATCH = 128

/**
 * Inserts pending jobs, each unless its account already has `capacity` unfinished jobs. Jobs asked together
 * (batched.ts) are one transaction: the accounts' rows locked (PostgreSQL; on SQLite the write transaction
 * holds the database), their unfinished jobs counted in one query, and the jobs that fit inserted in a few
 * multi-row INSERTs, so a job costs a fraction of a commit and of a round trip instead of five round trips
 * and a commit of its own. Within a transaction (`sql` is one) each job is inserted on its own.
 */
export function jobInserts(
  sql: Sql,
): (accountId: string, job: PrintJob, capacity: number, answer?: IdempotentAnswer) => Promise<boolean> {
  const together = batchedOn(
    sql,
    (items: readonly JobInsert[]) => inTransaction(sql, (tx) => insertTogether(tx, items)),
    { maxBatch: MAX_BATCH },
  )
  return (accountId, job, capacity, answer) => together({ accountId, job, capacity, answer })
}

async function insertTogether(tx: Sql, items: readonly JobInsert[]): Promise<boolean[]> {
  const accounts = [...new Set(items.map((item) => item.accountId))].sort()
  // PostgreSQL: the accounts' rows are the locks that make count-then-insert one step per account; taken in
  // one order, so that two batches wait for each other instead of deadlocking.
  if (tx.engine === 'postgres')
    await tx.db
      .selectFrom('accounts')
      .select('account_id')
      .where('account_id', 'in', accounts)
      .orderBy('account_id')
      .forUpdate()
      .execute()
  const unfinished = await unfinishedJobs(tx.db, accounts, Math.max(...items.map((item) => item.capacity)))
  const fits = items.map((item) => {
    const queued = unfinished.get(item.accountId) ?? 0
    if (queued >= item.capacity) return false
    unfinished.set(item.accountId, queued + 1)
    return true
  })
  const accepted = items.filter((_, i) => fits[i])
  for (const rows of powersOfTwo(accepted))
    await tx.db
      .insertInto('print_jobs')
      .values(
        rows.map(({ accountId, job }) => ({
          print_job_id: job.print_job_id,
          account_id: accountId,
          document_id: job.document_id,
          printer_id: job.printer_id,
          status: job.status,
          options: JSON.stringify(Object.fromEntries(PRINT_OPTION_KEYS.map((key) => [key, job[key]]))),
          created_at: job.created_at,
          reserved_at: job.reserved_at,
          started_at: job.started_at,
          completed_at: job.completed_at,
          failure_reason: job.failure_reason,
        })),
      )
      .execute()
  for (const { answer } of accepted) {
    if (!answer) continue
    await tx.db
      .updateTable('idempotency_keys')
      .set({ state: 'completed', status_code: answer.statusCode, response_body: answer.body })
      .where('account_id', '=', answer.scope.accountId)
      .where('endpoint', '=', answer.scope.endpoint)
      .where('key', '=', answer.scope.key)
      .execute()
  }
  return fits
}

/**
 * Each account's unfinished jobs, counted up to `limit` only, so that the count costs the same however long
 * a queue grows (one query for every account).
 */
async function unfinishedJobs(
  db: Kysely<Database>,
  accounts: readonly string[],
  limit: number,
): Promise<Map<string, number>> {
  const rows = await db
    .selectFrom('accounts as a')
    .select((eb) => [
      'a.account_id',
      eb
        .selectFrom((inner) =>
          inner
            .selectFrom('print_jobs as j')
            .select('j.seq')
            .whereRef('j.account_id', '=', 'a.account_id')
            .where('j.status', 'in', UNFINISHED)
            .limit(limit)
            .as('unfinished'),
        )
        .select(sql<number | string>`count(*)`.as('n'))
        .as('n'),
    ])
    .where('a.account_id', 'in', accounts)
    .execute()
  // PostgreSQL's count is a bigint, which the driver gives as a string.
  return new Map(rows.map((row) => [row.account_id, Number(row.n ?? 0)]))
}
