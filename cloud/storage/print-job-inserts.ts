import { type Insertable, sql } from 'kysely'
import type { Document } from '../../protocol/document.ts'
import type { PrintJobStatus } from '../../protocol/enums.ts'
import { type PrintJob, resolvedOptionsOf } from '../../protocol/print-job.ts'
import { batchedOn, padded, powersOfTwo } from './batched.ts'
import {
  type DocumentStatements,
  documentStatements,
  inAccountOrder,
  insertCounted,
} from './document-inserts.ts'
import { inTransaction, type Sql } from './engine.ts'
import type { IdempotencyScope } from './idempotency.ts'
import type { Database } from './schema.ts'
import { type SlotOf, slotsOf, statementTemplates } from './statement-templates.ts'

/** The answer an Idempotency-Key replays: written in the transaction that inserts the job. */
export interface IdempotentAnswer {
  scope: IdempotencyScope
  statusCode: number
  body: string
  /** The request's fingerprint: kept with the job (print_jobs.idempotency) and offered to its hub. */
  fingerprint?: string
}

/** What a job keeps of its Idempotency-Key, for its hub (protocol: JobIdempotency). */
export function jobIdempotency(answer: IdempotentAnswer | undefined): string | null {
  if (answer?.fingerprint === undefined) return null
  const { endpoint, key } = answer.scope
  return JSON.stringify({ endpoint, key, fingerprint: answer.fingerprint })
}

/** What a new job is stored with beyond itself (PrintJobRepository.create). */
export interface JobCreation {
  /** Unfinished jobs the account may have at most, this one included. */
  capacity: number
  /** The Idempotency-Key's answer, written in the same transaction. */
  answer?: IdempotentAnswer
  /**
   * What the lifecycle's `offer` rule records, when the job goes to its hub as it is created
   * (cloud/print-jobs/lifecycle.ts, JOB_ENTRY): recorded as the job is inserted, if its account is active.
   */
  offer?: { offered_at: string }
  /**
   * The job's document when it is new with the job and kept in its row (a small document given in the
   * request): inserted in the job's transaction, within its account's storage quota, so that the two rows
   * cost one commit. Refused by the quota, neither is stored.
   */
  document?: { document: Document; content: Buffer; quotaBytes: number }
}

/**
 * What became of a new job: refused by a full queue or by its new document's storage quota
 * (JobCreation.document), stored, or stored offered (JobCreation.offer).
 */
export type JobCreated = 'queue_full' | 'quota_exceeded' | 'created' | 'offered'

interface JobInsert extends JobCreation {
  accountId: string
  job: PrintJob
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
): (accountId: string, job: PrintJob, creation: JobCreation) => Promise<JobCreated> {
  const statements = { ...insertStatements(sql), documents: documentStatements(sql.db) }
  const together = batchedOn(
    sql,
    (items: readonly JobInsert[]) => inTransaction(sql, (tx) => insertTogether(tx, statements, items)),
    { maxBatch: MAX_BATCH },
  )
  return (accountId, job, creation) => together({ ...creation, accountId, job })
}

async function insertTogether(
  tx: Sql,
  statements: InsertStatements,
  items: readonly JobInsert[],
): Promise<JobCreated[]> {
  // Padded (batched.ts), so that a few texts serve every number of accounts.
  const accounts = padded([...new Set(items.map((item) => item.accountId))].sort())
  // PostgreSQL: the accounts' rows are the locks that make count-then-insert one step per account; taken in
  // one order, so that two batches wait for each other instead of deadlocking.
  if (tx.engine === 'postgres') await statements.lockAccounts(tx.db, `${accounts.length}`, accounts)
  // New documents first, each counted against its account's quota, in the order every such count takes.
  const refused = new Set<number>()
  const documents = items.flatMap(({ accountId, document }, item) =>
    document ? [{ item, accountId, ...document }] : [],
  )
  for (const index of inAccountOrder(documents)) {
    const insert = documents[index]!
    if (!(await insertCounted(tx.db, statements.documents, insert))) refused.add(insert.item)
  }
  const { rows: counted } = await statements.countQueues(tx.db, `${accounts.length}`, {
    accounts,
    limit: Math.max(...items.map((item) => item.capacity)),
  })
  const queues = new Map(
    counted.map((row) => [row.account_id, { unfinished: row.n ?? 0, active: row.state === 'active' }]),
  )
  const outcomes = items.map((item, index): JobCreated => {
    if (refused.has(index)) return 'quota_exceeded'
    const queue = queues.get(item.accountId)
    const queued = queue?.unfinished ?? 0
    if (queued >= item.capacity) return 'queue_full'
    queues.set(item.accountId, { unfinished: queued + 1, active: queue?.active ?? false })
    return item.offer !== undefined && queue?.active ? 'offered' : 'created'
  })
  const accepted = items.flatMap((item, i) => {
    const outcome = outcomes[i]
    if (outcome === 'queue_full' || outcome === 'quota_exceeded') return []
    const { accountId, job, answer } = item
    const row: JobRow = {
      print_job_id: job.print_job_id,
      account_id: accountId,
      document_id: job.document_id,
      printer_id: job.printer_id,
      status: job.status,
      options: JSON.stringify(resolvedOptionsOf(job)),
      created_at: job.created_at,
      reserved_at: job.reserved_at,
      started_at: job.started_at,
      completed_at: job.completed_at,
      failure_reason: job.failure_reason,
      offered_at: outcome === 'offered' ? (item.offer?.offered_at ?? null) : null,
      idempotency: jobIdempotency(answer),
    }
    return [{ row, answer }]
  })
  for (const rows of powersOfTwo(accepted.map(({ row }) => row)))
    await statements.insertJobs(tx.db, `${rows.length}`, rows)
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
  return outcomes
}

/** The columns a new job's row is inserted with. */
const JOB_COLUMNS = [
  'print_job_id',
  'account_id',
  'document_id',
  'printer_id',
  'status',
  'options',
  'created_at',
  'reserved_at',
  'started_at',
  'completed_at',
  'failure_reason',
  'offered_at',
  'idempotency',
] as const

type JobRow = Pick<Insertable<Database['print_jobs']>, (typeof JOB_COLUMNS)[number]>

type InsertStatements = ReturnType<typeof insertStatements> & { documents: DocumentStatements }

/** A batch's statements, as templates by number of accounts or rows (statement-templates.ts). */
function insertStatements({ db }: Sql) {
  return {
    lockAccounts: statementTemplates((accounts: readonly string[], slot: SlotOf<readonly string[]>) =>
      db
        .selectFrom('accounts')
        .select('account_id')
        .where(
          'account_id',
          'in',
          slotsOf(slot, accounts, (all) => all),
        )
        .orderBy('account_id')
        .forUpdate(),
    ),
    /**
     * Each account's unfinished jobs, counted up to `limit` only, so that the count costs the same however
     * long a queue grows, and whether the account is active (one query for every account).
     */
    countQueues: statementTemplates(
      (
        { accounts }: { accounts: readonly string[]; limit: number },
        slot: SlotOf<{ accounts: readonly string[]; limit: number }>,
      ) =>
        db
          .selectFrom('accounts as a')
          .select((eb) => [
            'a.account_id',
            'a.state',
            eb
              .selectFrom((inner) =>
                inner
                  .selectFrom('print_jobs as j')
                  .select('j.seq')
                  .whereRef('j.account_id', '=', 'a.account_id')
                  .where('j.status', 'in', UNFINISHED)
                  .limit(slot((args) => args.limit))
                  .as('unfinished'),
              )
              .select(sql<number>`count(*)`.as('n'))
              .as('n'),
          ])
          .where(
            'a.account_id',
            'in',
            slotsOf(slot, accounts, (args) => args.accounts),
          ),
    ),
    insertJobs: statementTemplates((rows: readonly JobRow[], slot: SlotOf<readonly JobRow[]>) =>
      db
        .insertInto('print_jobs')
        .values(
          rows.map(
            (_, i) =>
              Object.fromEntries(
                JOB_COLUMNS.map((column) => [column, slot((all) => all[i]?.[column] ?? null)]),
              ) as JobRow,
          ),
        ),
    ),
  }
}
