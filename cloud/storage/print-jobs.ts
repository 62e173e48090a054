import { PRINT_JOB_STATUSES, type PrintJobStatus } from '../../protocol/enums.ts'
import type { JobIdempotency, LanJob } from '../../protocol/hub-messages.ts'
import type { PageOf } from '../../protocol/pagination.ts'
import type { PrintJob, ResolvedPrintOptions } from '../../protocol/print-job.ts'
import { batchedLookup, batchedLookupAll } from './batched.ts'
import type { Sql } from './engine.ts'
import { type LanJobRecorded, lanJobRecorder } from './lan-jobs.ts'
import { pageAfter } from './paging.ts'
import { jobChanges } from './print-job-changes.ts'
import { type JobCreated, type JobCreation, jobInserts } from './print-job-inserts.ts'

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
  /** The Idempotency-Key it was created with, offered to its hub (docs/lan-printing.md). */
  idempotency: JobIdempotency | null
  /** The document's bytes when its row keeps them (a small RAW document, migration 24), for the offer. */
  content?: Buffer | null
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
  /** The LAN job that printed this job's request (JOB_RULES.dropByHub). */
  duplicate_of?: string
  /** Replaces the job's waiting reason (null clears it); a job that leaves pending and reserved has none. */
  waiting_reason?: string | null
}

/** A rule of cloud/print-jobs/lifecycle.ts, as storage applies it. */
export interface JobRuleSpec {
  from: readonly PrintJobStatus[]
  to?: PrintJobStatus
  when?: 'never_offered' | 'cancel_requested' | 'no_cancel_requested' | 'unoffered'
}

/** A job of an account with the cancel recorded for it (the console's job page shows both). */
export interface PrintJobDetails extends PrintJob {
  cancel_requested_at: string | null
  cancel_reason: 'cancelled' | 'expired' | null
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

/** A job as a lifecycle change left it, with the cancel (or expiry) requested of its hub, if any. */
export interface AppliedChange {
  printer_id: string
  status: PrintJobStatus
  created_at: string
  failure_reason: string | null
  cancel_requested_at: string | null
  cancel_reason: 'cancelled' | 'expired' | null
}

export interface PrintJobRepository {
  /** Records a job a hub took on its LAN, once (lan-jobs.ts). */
  recordLanJob(agentId: string, job: LanJob): Promise<LanJobRecorded>
  /** A job of any account, with its hub; for the dispatcher, never for account clients. */
  dispatchable(printJobId: string): Promise<DispatchableJob | undefined>
  /** The agent's jobs that are still pending or reserved, oldest first (what a reconnecting hub is offered). */
  unfinishedForAgent(agentId: string): Promise<DispatchableJob[]>
  /**
   * Applies a lifecycle rule as one compare-and-set: only if the job's status is one of `rule.from` and its
   * condition holds, it moves to `rule.to` (if any) and records `change` where nothing was recorded yet.
   * With `hubId` (the hub that reported the change), only a job on a printer of that hub changes. Returns the
   * job as it is now (what its log line names), or undefined (changing nothing) otherwise.
   */
  apply(
    printJobId: string,
    rule: JobRuleSpec,
    change: StatusChange,
    hubId?: string,
  ): Promise<AppliedChange | undefined>
  /**
   * Pending jobs created before `cutoff` that no hub was offered although their hub is online (an offer that
   * failed to go out), oldest first, at most `limit`.
   */
  unofferedToOnlineHubs(cutoff: string, limit: number): Promise<DispatchableJob[]>
  /**
   * Unfinished jobs offered to a hub that is online, of which nothing was heard since `cutoff` (no offer,
   * acknowledgement, start or cancel request after it), oldest first, at most `limit`.
   */
  silentAtOnlineHubs(cutoff: string, limit: number): Promise<DispatchableJob[]>
  /** Jobs still pending that were created before `cutoff`, oldest first, at most `limit`. */
  pendingSince(cutoff: string, limit: number): Promise<JobHandoff[]>
  /** Whether the agent prints a job of this document (it may then download it). */
  agentMayRead(agentId: string, documentId: string): Promise<boolean>
  /**
   * Inserts a pending job unless the account already has `capacity` unfinished jobs; the count and the
   * insert are one transaction, with the Idempotency-Key's answer if any (a cloud that dies before answering
   * leaves a key that replays this job, never one that lets the retry create a second), and the job stored
   * offered if `creation` says so. Returns what became of the job.
   */
  create(accountId: string, job: PrintJob, creation: JobCreation): Promise<JobCreated>
  findById(accountId: string, printJobId: string): Promise<PrintJob | undefined>
  /** The account's job and the cancel (or expiry) requested of its hub, if any. */
  findDetails(accountId: string, printJobId: string): Promise<PrintJobDetails | undefined>
  list(
    accountId: string,
    limit: number,
    cursor: string | undefined,
    filter: PrintJobFilter,
  ): Promise<PageOf<PrintJob> | undefined>
  /** How many of the account's jobs created at or after `since` (an ISO time) are in each status (one query). */
  countByStatusSince(accountId: string, since: string): Promise<Record<PrintJobStatus, number>>
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
  origin: PrintJob['origin']
  duplicate_of: string | null
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
    origin: row.origin,
    duplicate_of: row.duplicate_of,
  }
}

const UNSTARTED: readonly PrintJobStatus[] = ['pending', 'reserved']
const UNFINISHED: readonly PrintJobStatus[] = ['pending', 'reserved', 'printing']

export function createPrintJobRepository(sql: Sql): PrintJobRepository {
  const { db } = sql
  const jobs = (on = db) =>
    on
      .selectFrom('print_jobs as j')
      .innerJoin('documents as d', 'd.document_id', 'j.document_id')
      .selectAll('j')
      .select(['d.mime_type', 'd.format', 'd.raw_language'])
  const dispatch = () =>
    db
      .selectFrom('print_jobs as j')
      .innerJoin('documents as d', 'd.document_id', 'j.document_id')
      .innerJoin('printers as p', 'p.printer_id', 'j.printer_id')
      .selectAll('j')
      .select([
        'd.mime_type',
        'd.format',
        'd.raw_language',
        'd.sha256',
        'd.size_bytes',
        'd.content',
        'p.agent_id',
        'p.printer_key',
      ])
  type DispatchRow = Awaited<ReturnType<ReturnType<typeof dispatch>['executeTakeFirstOrThrow']>>
  const toDispatchable = (row: DispatchRow): DispatchableJob => ({
    ...toJob(row as JobRow),
    account_id: row.account_id,
    agent_id: row.agent_id,
    printer_key: row.printer_key,
    sha256: row.sha256,
    size_bytes: row.size_bytes,
    offered_at: row.offered_at,
    cancel_requested_at: row.cancel_requested_at,
    cancel_reason: row.cancel_reason as JobHandoff['cancel_reason'],
    idempotency: row.idempotency === null ? null : (JSON.parse(row.idempotency) as JobIdempotency),
    content: row.content,
  })
  // Webhook deliveries render each job event's body from the job (cloud/webhooks/event-payload.ts): a batch of
  // claimed deliveries reads its jobs in one query.
  const jobById = batchedLookup(sql, {
    select: (printJobIds: readonly string[]) => jobs().where('j.print_job_id', 'in', printJobIds),
    keyOfRow: (row) => row.print_job_id,
  })
  // Every hub's connect asks for its unfinished jobs: a fleet reconnecting asks thousands within seconds.
  const unfinishedByAgent = batchedLookupAll(sql, {
    select: (agentIds) =>
      dispatch().where('p.agent_id', 'in', agentIds).where('j.status', 'in', UNSTARTED).orderBy('j.seq'),
    keyOfRow: (row) => row.agent_id,
  })
  return {
    async dispatchable(printJobId) {
      const row = await dispatch().where('j.print_job_id', '=', printJobId).executeTakeFirst()
      return row && toDispatchable(row)
    },
    unfinishedForAgent: async (agentId) => (await unfinishedByAgent(agentId)).map(toDispatchable),
    apply: jobChanges(sql),
    recordLanJob: lanJobRecorder(sql),
    async pendingSince(cutoff, limit) {
      const rows = await db
        .selectFrom('print_jobs as j')
        .innerJoin('printers as p', 'p.printer_id', 'j.printer_id')
        .select([
          'j.print_job_id',
          'p.agent_id',
          'j.status',
          'j.offered_at',
          'j.cancel_requested_at',
          'j.cancel_reason',
        ])
        .where('j.status', '=', 'pending')
        .where('j.created_at', '<', cutoff)
        .orderBy('j.created_at')
        .limit(limit)
        .execute()
      return rows as JobHandoff[]
    },
    async unofferedToOnlineHubs(cutoff, limit) {
      const rows = await dispatch()
        .innerJoin('agents as a', 'a.agent_id', 'p.agent_id')
        .innerJoin('accounts as ac', 'ac.account_id', 'j.account_id')
        .where('j.status', '=', 'pending')
        .where('j.created_at', '<', cutoff)
        .where('j.offered_at', 'is', null)
        .where('j.cancel_requested_at', 'is', null)
        .where('a.online', '=', 1)
        // A suspended account's jobs wait; they are offered once it is resumed.
        .where('ac.state', '=', 'active')
        .orderBy('j.created_at')
        .limit(limit)
        .execute()
      return rows.map(toDispatchable)
    },
    async silentAtOnlineHubs(cutoff, limit) {
      const rows = await dispatch()
        .innerJoin('agents as a', 'a.agent_id', 'p.agent_id')
        .where('j.status', 'in', UNFINISHED)
        .where('j.offered_at', '<', cutoff)
        .where((eb) =>
          eb.and(
            (['j.reserved_at', 'j.started_at', 'j.cancel_requested_at'] as const).map((column) =>
              eb.or([eb(column, 'is', null), eb(column, '<', cutoff)]),
            ),
          ),
        )
        .where('a.online', '=', 1)
        .orderBy('j.created_at')
        .limit(limit)
        .execute()
      return rows.map(toDispatchable)
    },
    async agentMayRead(agentId, documentId) {
      const row = await db
        .selectFrom('print_jobs as j')
        .innerJoin('printers as p', 'p.printer_id', 'j.printer_id')
        .select('j.print_job_id')
        .where('p.agent_id', '=', agentId)
        .where('j.document_id', '=', documentId)
        .limit(1)
        .executeTakeFirst()
      return row !== undefined
    },
    create: jobInserts(sql),
    async findById(accountId, printJobId) {
      const row = await jobById(printJobId)
      return row?.account_id === accountId ? toJob(row as JobRow) : undefined
    },
    async findDetails(accountId, printJobId) {
      const row = await jobs()
        .where('j.account_id', '=', accountId)
        .where('j.print_job_id', '=', printJobId)
        .executeTakeFirst()
      return (
        row && {
          ...toJob(row as JobRow),
          cancel_requested_at: row.cancel_requested_at,
          cancel_reason: row.cancel_reason as PrintJobDetails['cancel_reason'],
        }
      )
    },
    async countByStatusSince(accountId, since) {
      const rows = await db
        .selectFrom('print_jobs')
        .select((eb) => ['status', eb.fn.countAll<number>().as('n')])
        .where('account_id', '=', accountId)
        .where('created_at', '>=', since)
        .groupBy('status')
        .execute()
      const counts = Object.fromEntries(PRINT_JOB_STATUSES.map((status) => [status, 0])) as Record<
        PrintJobStatus,
        number
      >
      for (const row of rows) counts[row.status] = row.n
      return counts
    },
    list: (accountId, limit, cursor, filter) =>
      pageAfter(db, {
        list: { table: 'print_jobs', id: 'print_job_id', scope: { account_id: accountId } },
        cursor,
        limit,
        fetch: async (before) => {
          let page = jobs().where('j.account_id', '=', accountId).where('j.seq', '<', before)
          if (filter.status) page = page.where('j.status', '=', filter.status)
          if (filter.printer_id) page = page.where('j.printer_id', '=', filter.printer_id)
          return (await page
            .orderBy('j.seq', 'desc')
            .limit(limit + 1)
            .execute()) as JobRow[]
        },
        map: toJob,
        idOf: (job) => job.print_job_id,
      }),
  }
}
