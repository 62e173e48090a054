import type { PrintJobStatus } from '../../protocol/enums.ts'
import type { PageOf } from '../../protocol/pagination.ts'
import { PRINT_OPTION_KEYS, type PrintJob, type ResolvedPrintOptions } from '../../protocol/print-job.ts'
import type { SqliteDatabase } from './database.ts'
import { pageAfter } from './paging.ts'

export interface PrintJobFilter {
  status?: PrintJobStatus
  printer_id?: string
}

/** A job with what its hub needs to print it. */
export interface DispatchableJob extends PrintJob, JobHandoff {
  account_id: string
  printer_key: string | null
  sha256: string
  size_bytes: number
}

/** What a lifecycle rule records; each timestamp and reason is recorded once (the first one stays). */
export interface StatusChange {
  reserved_at?: string
  started_at?: string
  completed_at?: string
  failure_reason?: string
  failure_detail?: string
  offered_at?: string
  cancel_requested_at?: string
  cancel_reason?: string
  /** Replaces the job's waiting reason (null clears it); a job that leaves pending and reserved has none. */
  waiting_reason?: string | null
}

/** A rule of cloud/print-jobs/lifecycle.ts, as storage applies it. */
export interface JobRuleSpec {
  from: readonly PrintJobStatus[]
  to?: PrintJobStatus
  when?: 'never_offered' | 'cancel_requested' | 'no_cancel_requested'
}

/** An unfinished job and what its hub has been told: for the dispatcher and expiry. */
export interface JobHandoff {
  print_job_id: string
  agent_id: string
  status: PrintJobStatus
  offered_at: string | null
  cancel_requested_at: string | null
  cancel_reason: 'cancelled' | 'expired' | null
}

export interface PrintJobRepository {
  /** A job of any account, with its hub; for the dispatcher, never for account clients. */
  dispatchable(printJobId: string): DispatchableJob | undefined
  /** The agent's jobs that are still pending or reserved, oldest first (what a reconnecting hub is offered). */
  unfinishedForAgent(agentId: string): DispatchableJob[]
  /**
   * Applies a lifecycle rule as one compare-and-set: only if the job's status is one of `rule.from` and its
   * condition holds, it moves to `rule.to` (if any) and records `change` where nothing was recorded yet.
   * Returns false (changing nothing) otherwise.
   */
  apply(printJobId: string, rule: JobRuleSpec, change: StatusChange): boolean
  /**
   * Pending jobs created before `cutoff` that no hub was offered although their hub is online (an offer that
   * failed to go out), oldest first, at most `limit`.
   */
  unofferedToOnlineHubs(cutoff: string, limit: number): DispatchableJob[]
  /** Jobs still pending that were created before `cutoff`, oldest first, at most `limit`. */
  pendingSince(cutoff: string, limit: number): JobHandoff[]
  /** Whether the agent prints a job of this document (it may then download it). */
  agentMayRead(agentId: string, documentId: string): boolean
  /**
   * Inserts a pending job unless the account already has `capacity` unfinished jobs; the count and the
   * insert are one transaction. Returns false when the queue is full.
   */
  insertWithinCapacity(accountId: string, job: PrintJob, capacity: number): boolean
  findById(accountId: string, printJobId: string): PrintJob | undefined
  list(
    accountId: string,
    limit: number,
    cursor: string | undefined,
    filter: PrintJobFilter,
  ): PageOf<PrintJob> | undefined
}

interface JobRow {
  print_job_id: string
  document_id: string
  printer_id: string
  status: PrintJobStatus
  options: string
  created_at: string
  reserved_at: string | null
  started_at: string | null
  completed_at: string | null
  failure_reason: string | null
  failure_detail: string | null
  waiting_reason: PrintJob['waiting_reason']
  mime_type: string
  format: PrintJob['document_format']
  raw_language: PrintJob['document_raw_language']
}

const toJob = (row: JobRow): PrintJob => {
  const options = JSON.parse(row.options) as ResolvedPrintOptions
  return {
    print_job_id: row.print_job_id,
    document_id: row.document_id,
    document_mime_type: row.mime_type,
    document_format: row.format,
    document_raw_language: row.raw_language,
    printer_id: row.printer_id,
    status: row.status,
    ...options,
    created_at: row.created_at,
    reserved_at: row.reserved_at,
    started_at: row.started_at,
    completed_at: row.completed_at,
    failure_reason: row.failure_reason,
    failure_detail: row.failure_detail,
    waiting_reason: row.waiting_reason,
  }
}

const SELECT_JOB = `SELECT j.*, d.mime_type, d.format, d.raw_language
  FROM print_jobs j JOIN documents d ON d.document_id = j.document_id`

export function createPrintJobRepository(db: SqliteDatabase): PrintJobRepository {
  // Counts at most `capacity` rows, so the check costs the same however long the queue grows.
  const countUnfinished = db.prepare<[string, number], { n: number }>(
    `SELECT count(*) AS n FROM (SELECT 1 FROM print_jobs
       WHERE account_id = ? AND status IN ('pending', 'reserved', 'printing') LIMIT ?)`,
  )
  const insert = db.prepare(
    `INSERT INTO print_jobs (print_job_id, account_id, document_id, printer_id, status, options, created_at,
       reserved_at, started_at, completed_at, failure_reason) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  )
  const byId = db.prepare<[string, string], JobRow>(
    `${SELECT_JOB} WHERE j.account_id = ? AND j.print_job_id = ?`,
  )
  const seqOf = db.prepare<[string, string], { seq: number }>(
    'SELECT seq FROM print_jobs WHERE account_id = ? AND print_job_id = ?',
  )
  const pageQuery = db.prepare<
    [{ account: string; before: number; status: string | null; printer: string | null; limit: number }],
    JobRow
  >(
    `${SELECT_JOB} WHERE j.account_id = @account AND j.seq < @before
       AND (@status IS NULL OR j.status = @status) AND (@printer IS NULL OR j.printer_id = @printer)
     ORDER BY j.seq DESC LIMIT @limit`,
  )
  const insertWithinCapacity = db.transaction((accountId: string, job: PrintJob, capacity: number) => {
    if ((countUnfinished.get(accountId, capacity)?.n ?? 0) >= capacity) return false
    const options = Object.fromEntries(PRINT_OPTION_KEYS.map((key) => [key, job[key]]))
    insert.run(
      job.print_job_id,
      accountId,
      job.document_id,
      job.printer_id,
      job.status,
      JSON.stringify(options),
      job.created_at,
      job.reserved_at,
      job.started_at,
      job.completed_at,
      job.failure_reason,
    )
    return true
  })
  const DISPATCH = `SELECT j.*, d.mime_type, d.format, d.raw_language, d.sha256, d.size_bytes, p.agent_id,
      p.printer_key FROM print_jobs j JOIN documents d ON d.document_id = j.document_id
      JOIN printers p ON p.printer_id = j.printer_id`
  type DispatchRow = JobRow & Omit<DispatchableJob, keyof PrintJob>
  const toDispatchable = (row: DispatchRow): DispatchableJob => ({
    ...toJob(row),
    account_id: row.account_id,
    agent_id: row.agent_id,
    printer_key: row.printer_key,
    sha256: row.sha256,
    size_bytes: row.size_bytes,
    offered_at: row.offered_at,
    cancel_requested_at: row.cancel_requested_at,
    cancel_reason: row.cancel_reason,
  })
  const dispatchable = db.prepare<[string], DispatchRow>(`${DISPATCH} WHERE j.print_job_id = ?`)
  const unfinished = db.prepare<[string], DispatchRow>(
    `${DISPATCH} WHERE p.agent_id = ? AND j.status IN ('pending', 'reserved') ORDER BY j.seq`,
  )
  const unofferedToOnline = db.prepare<[string, number], DispatchRow>(
    `${DISPATCH} JOIN agents a ON a.agent_id = p.agent_id
     WHERE j.status = 'pending' AND j.created_at < ? AND j.offered_at IS NULL
       AND j.cancel_requested_at IS NULL AND a.online = 1
     ORDER BY j.created_at LIMIT ?`,
  )
  const pendingSince = db.prepare<[string, number], JobHandoff>(
    `SELECT j.print_job_id, p.agent_id, j.status, j.offered_at, j.cancel_requested_at, j.cancel_reason
     FROM print_jobs j JOIN printers p ON p.printer_id = j.printer_id
     WHERE j.status = 'pending' AND j.created_at < ? ORDER BY j.created_at LIMIT ?`,
  )
  const mayRead = db.prepare<[string, string], { one: number }>(
    `SELECT 1 AS one FROM print_jobs j JOIN printers p ON p.printer_id = j.printer_id
     WHERE p.agent_id = ? AND j.document_id = ? LIMIT 1`,
  )
  const statusOf = db.prepare<[string], { status: PrintJobStatus }>(
    'SELECT status FROM print_jobs WHERE print_job_id = ?',
  )
  const update = db.prepare(
    `UPDATE print_jobs SET status = @to, reserved_at = coalesce(reserved_at, @reserved_at),
       started_at = coalesce(started_at, @started_at), completed_at = coalesce(completed_at, @completed_at),
       failure_reason = coalesce(failure_reason, @failure_reason),
       failure_detail = CASE WHEN failure_reason IS NULL THEN @failure_detail ELSE failure_detail END,
       offered_at = coalesce(offered_at, @offered_at),
       cancel_requested_at = coalesce(cancel_requested_at, @cancel_requested_at),
       cancel_reason = coalesce(cancel_reason, @cancel_reason),
       waiting_reason = CASE WHEN @to NOT IN ('pending', 'reserved') THEN NULL
         WHEN @set_waiting = 1 THEN @waiting_reason ELSE waiting_reason END
     WHERE print_job_id = @id AND status = @from AND CASE @when
       WHEN 'never_offered' THEN offered_at IS NULL
       WHEN 'cancel_requested' THEN cancel_requested_at IS NOT NULL
       WHEN 'no_cancel_requested' THEN cancel_requested_at IS NULL
       ELSE 1 END`,
  )
  const apply = db.transaction((id: string, rule: JobRuleSpec, change: StatusChange) => {
    const current = statusOf.get(id)?.status
    if (current === undefined || !rule.from.includes(current)) return false
    return (
      update.run({
        id,
        from: current,
        to: rule.to ?? current,
        when: rule.when ?? null,
        reserved_at: change.reserved_at ?? null,
        started_at: change.started_at ?? null,
        completed_at: change.completed_at ?? null,
        failure_reason: change.failure_reason ?? null,
        failure_detail: change.failure_detail ?? null,
        offered_at: change.offered_at ?? null,
        cancel_requested_at: change.cancel_requested_at ?? null,
        cancel_reason: change.cancel_reason ?? null,
        set_waiting: change.waiting_reason === undefined ? 0 : 1,
        waiting_reason: change.waiting_reason ?? null,
      }).changes === 1
    )
  })
  return {
    dispatchable(printJobId) {
      const row = dispatchable.get(printJobId)
      return row && toDispatchable(row)
    },
    unfinishedForAgent: (agentId) => unfinished.all(agentId).map(toDispatchable),
    apply: (id, rule, change) => apply.immediate(id, rule, change),
    pendingSince: (cutoff, limit) => pendingSince.all(cutoff, limit),
    unofferedToOnlineHubs: (cutoff, limit) => unofferedToOnline.all(cutoff, limit).map(toDispatchable),
    agentMayRead: (agentId, documentId) => mayRead.get(agentId, documentId) !== undefined,
    insertWithinCapacity: (accountId, job, capacity) =>
      insertWithinCapacity.immediate(accountId, job, capacity),
    findById(accountId, printJobId) {
      const row = byId.get(accountId, printJobId)
      return row && toJob(row)
    },
    list(accountId, limit, cursor, filter) {
      return pageAfter(
        cursor === undefined ? Number.MAX_SAFE_INTEGER : seqOf.get(accountId, cursor)?.seq,
        (before) =>
          pageQuery.all({
            account: accountId,
            before,
            status: filter.status ?? null,
            printer: filter.printer_id ?? null,
            limit: limit + 1,
          }),
        limit,
        toJob,
        (job) => job.print_job_id,
      )
    },
  }
}
