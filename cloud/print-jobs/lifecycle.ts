import type { BaseLogger } from 'pino'
import type { PrintJobStatus } from '../../protocol/enums.ts'
import type { PrintJob } from '../../protocol/print-job.ts'
import type { JobCreated, JobCreation } from '../storage/print-job-inserts.ts'
import type { AppliedChange, PrintJobRepository, StatusChange } from '../storage/print-jobs.ts'

/**
 * A print job's life (docs/job-lifecycle.md), as one table that job creation, the routes, the dispatcher and
 * expiry all go through. Each rule names the statuses it starts from, the status it leads to (none: the
 * status stays), a condition on what the cloud has told the job's hub, and what it records. Storage applies a
 * rule as one compare-and-set, so a stale, repeated or crossing change does nothing.
 *
 * The rule that keeps the API truthful: once a hub may hold a job (it was offered), only that hub knows
 * whether the job's bytes went to the printer, so the job becomes `cancelled` (or `failed` with `expired`)
 * only when the hub reports that it dropped it.
 */
export type JobCondition = 'never_offered' | 'cancel_requested' | 'no_cancel_requested' | 'unoffered'

export interface JobRule {
  from: readonly PrintJobStatus[]
  to?: PrintJobStatus
  when?: JobCondition
}

const UNSTARTED = ['pending', 'reserved'] as const
const UNFINISHED = ['pending', 'reserved', 'printing'] as const

export const JOB_RULES = {
  /** The cloud sends the job to its hub; a job whose cancel was requested is never offered again. */
  offer: { from: UNSTARTED, when: 'no_cancel_requested' },
  /**
   * The sweep offers a job whose offer never went out (its hub was online): only while it was never offered,
   * so that of several nodes sweeping at once exactly one sends it.
   */
  offerMissed: { from: ['pending'], when: 'unoffered' },
  /** The hub has the job in its spool. */
  reserve: { from: ['pending'], to: 'reserved' },
  /** The hub recorded `printing` and is about to send the first byte. */
  start: { from: UNSTARTED, to: 'printing' },
  print: { from: UNFINISHED, to: 'printed' },
  fail: { from: UNFINISHED, to: 'failed' },
  /** The hub says why the job is not printing yet (or that it no longer waits). */
  wait: { from: UNSTARTED },
  /** A cancel of a job its hub may hold: recorded, then confirmed (or refused) by the hub. */
  requestCancel: { from: UNSTARTED },
  /** Expiry of a job its hub may hold: recorded once, so that of several nodes sweeping exactly one asks the hub. */
  requestExpiry: { from: UNSTARTED, when: 'no_cancel_requested' },
  /** The hub dropped the job before any byte of it reached the printer. */
  confirmCancel: { from: UNSTARTED, to: 'cancelled', when: 'cancel_requested' },
  /**
   * The job's hub dropped it unasked, before any byte of it reached the printer: a LAN job cancelled on the
   * LAN, or an offer whose request the hub had taken on its LAN as another job (`duplicate_of`,
   * docs/lan-printing.md). Applied only to a report of the job's own hub.
   */
  dropByHub: { from: UNSTARTED, to: 'cancelled' },
  /** No hub was ever offered the job: nothing can have printed it. */
  cancelUnoffered: { from: ['pending'], to: 'cancelled', when: 'never_offered' },
  expireUnoffered: { from: ['pending'], to: 'failed', when: 'never_offered' },
} as const satisfies Record<string, JobRule>

export type JobEvent = keyof typeof JOB_RULES

/**
 * How a job enters the table, from no status (inserted, not updated): `pending`. One that goes to its hub as
 * it is created (its printer is online) is inserted with what the `offer` rule records, whose condition (no
 * cancel requested) holds of a job that did not exist yet; from then on its hub may hold it. Storage makes
 * that record only for a job of an active account: a suspended account's jobs wait, and `offerMissed` offers
 * them once it is resumed.
 */
export const JOB_ENTRY = { from: [], to: 'pending' } as const satisfies JobRule

/** A job as it enters the table. */
export type NewPrintJob = PrintJob & { status: (typeof JOB_ENTRY)['to'] }

/**
 * How a new job is stored (JobCreation, but for the offer): `offered` when it goes to its hub as it is
 * stored, its printer being online; its offer is sent right after.
 */
export type NewJobCreation = Omit<JobCreation, 'offer'> & { offered: boolean }

/** What became of a new job, and when it was recorded offered (null: it was not). */
export interface JobEntered {
  created: JobCreated
  offered_at: string | null
}

/** What the `offer` rules record. */
const offerRecord = (at: Date) => ({ offered_at: at.toISOString() }) satisfies StatusChange

export type CancelReason = 'cancelled' | 'expired'

/** Where a change is logged: the cloud's logger, or a request's (its lines then carry the request id). */
export type JobLog = Pick<BaseLogger, 'info'>

/** The line each event writes once it applied. */
const LOG_MESSAGES: Record<JobEvent, string> = {
  offer: 'print job offered',
  offerMissed: 'print job offered',
  reserve: 'print job reserved',
  start: 'print job printing',
  print: 'print job printed',
  fail: 'print job failed',
  wait: 'print job waiting',
  requestCancel: 'print job cancel requested',
  requestExpiry: 'print job cancel requested',
  confirmCancel: 'print job cancelled',
  dropByHub: 'print job cancelled',
  cancelUnoffered: 'print job cancelled',
  expireUnoffered: 'print job expired',
}

/**
 * The job's lifecycle over its repository: every change of a job's status or of what its hub was told, each
 * logged as one line (`print job <what>`, with `print_job_id`, `printer_id` and `status`) when it applies.
 */
export class JobLifecycle {
  readonly #jobs: PrintJobRepository
  readonly #log: JobLog | undefined

  /** Without a logger (tests), changes are applied without lines unless a call passes one. */
  constructor(jobs: PrintJobRepository, log?: JobLog) {
    this.#jobs = jobs
    this.#log = log
  }

  /**
   * Applies `event` if the job is where its rule starts (and, with `hubId`, if it is on a printer of that hub,
   * the one reporting it); false (changing nothing) otherwise.
   */
  async apply(
    printJobId: string,
    event: JobEvent,
    change: StatusChange = {},
    log = this.#log,
    hubId?: string,
  ): Promise<boolean> {
    return (await this.#apply(printJobId, event, change, log, hubId)) !== undefined
  }

  /**
   * The hub `hubId` has the job in its spool: the job as it is now, with the cancel requested of it meanwhile
   * (which the hub is then told again), or undefined when that changes nothing (not pending, or not its job).
   */
  reserve(printJobId: string, hubId: string, at: string): Promise<AppliedChange | undefined> {
    return this.#apply(printJobId, 'reserve', { reserved_at: at }, this.#log, hubId)
  }

  async #apply(
    printJobId: string,
    event: JobEvent,
    change: StatusChange,
    log: JobLog | undefined,
    hubId: string | undefined,
  ): Promise<AppliedChange | undefined> {
    const applied = await this.#jobs.apply(printJobId, JOB_RULES[event], change, hubId)
    if (!applied) return undefined
    const failureReason = applied.status === 'failed' ? applied.failure_reason : undefined
    log?.info(
      {
        print_job_id: printJobId,
        printer_id: applied.printer_id,
        status: applied.status,
        ...(failureReason && { failure_reason: failureReason }),
        ...(event === 'wait' && { waiting_reason: change.waiting_reason }),
        ...((event === 'requestCancel' || event === 'requestExpiry') && {
          cancel_reason: change.cancel_reason,
        }),
      },
      failureReason === 'expired' ? 'print job expired' : LOG_MESSAGES[event],
    )
    return applied
  }

  /**
   * Inserts a job as it enters the table (JOB_ENTRY), unless its account's queue is full, and logs it with
   * `log` (`print job created`).
   */
  async create(
    accountId: string,
    job: NewPrintJob,
    { offered, ...creation }: NewJobCreation,
    log = this.#log,
    at = new Date(),
  ): Promise<JobEntered> {
    const offer = offered ? offerRecord(at) : undefined
    const created = await this.#jobs.create(accountId, job, { ...creation, ...(offer && { offer }) })
    if (created === 'queue_full' || created === 'quota_exceeded') return { created, offered_at: null }
    log?.info(
      { print_job_id: job.print_job_id, printer_id: job.printer_id, status: job.status },
      'print job created',
    )
    return { created, offered_at: created === 'offered' && offer ? offer.offered_at : null }
  }

  /** Records that the job goes to its hub; `missed`: only if it was never offered (the sweep's claim). */
  offered(printJobId: string, at = new Date(), missed = false): Promise<boolean> {
    return this.apply(printJobId, missed ? 'offerMissed' : 'offer', offerRecord(at))
  }

  /** An expiry of a job its hub may hold, recorded once (the first node to record it asks the hub). */
  requestExpiry(printJobId: string, at = new Date()): Promise<boolean> {
    return this.apply(printJobId, 'requestExpiry', {
      cancel_requested_at: at.toISOString(),
      cancel_reason: 'expired',
    })
  }

  requestCancel(
    printJobId: string,
    reason: CancelReason,
    at = new Date(),
    log = this.#log,
  ): Promise<boolean> {
    return this.apply(
      printJobId,
      'requestCancel',
      { cancel_requested_at: at.toISOString(), cancel_reason: reason },
      log,
    )
  }

  /**
   * What a hub reported about a job; false when it changes nothing (stale, repeated or not allowed). With
   * `hubId`, the hub that reported it: a job that is not on one of its printers does not change.
   */
  hubReported(
    printJobId: string,
    status: 'printing' | 'printed' | 'failed' | 'cancelled',
    at: string,
    failure: { reason?: string; detail?: string; duplicateOf?: string; unasked?: boolean } = {},
    log = this.#log,
    hubId?: string,
  ): Promise<boolean> {
    switch (status) {
      case 'printing':
        return this.apply(printJobId, 'start', { reserved_at: at, started_at: at }, log, hubId)
      case 'printed':
        return this.apply(
          printJobId,
          'print',
          { reserved_at: at, started_at: at, completed_at: at },
          log,
          hubId,
        )
      case 'failed':
        return this.apply(
          printJobId,
          'fail',
          {
            reserved_at: at,
            completed_at: at,
            failure_reason: failure.reason ?? 'printer_error',
            ...(failure.detail !== undefined && { failure_detail: failure.detail }),
          },
          log,
          hubId,
        )
      case 'cancelled':
        if ((failure.unasked || failure.duplicateOf !== undefined) && hubId !== undefined)
          return this.apply(
            printJobId,
            'dropByHub',
            {
              completed_at: at,
              ...(failure.duplicateOf !== undefined && { duplicate_of: failure.duplicateOf }),
            },
            log,
            hubId,
          )
        return this.apply(printJobId, 'confirmCancel', { completed_at: at }, log, hubId)
    }
  }
}
