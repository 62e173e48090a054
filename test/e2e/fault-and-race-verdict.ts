import type { PrintJob } from '../../protocol/print-job.ts'
import { occurrences } from './receipts.ts'

/** When a job's cancel is sent: at once, after a few ms, when its printer next receives bytes, or on its first byte. */
export const CANCEL_MODES = ['at-once', 'soon', 'next-up', 'on-first-byte'] as const
export type CancelMode = (typeof CANCEL_MODES)[number]

/** What the backend did for one job and what it was told. */
export interface JobTrace {
  n: number
  key: string
  printer: number
  payload: Buffer
  head: Buffer
  id: string | null
  /** Where the create was answered: the cloud, or the hub's LAN API when the cloud gave no answer. */
  via?: 'cloud' | 'lan'
  /** A deliberate second send of the same request and key: whether it named the same job. */
  resent: 'same' | 'different' | null
  /** The job the deliberate second send was answered with. */
  resentId?: string
  cancel: {
    mode: CancelMode
    status: number
    /** The job's status in a 200/202 body, or `details.status` of a 409. */
    answered: string | null
    errorCode: string | null
    /** Earlier attempts that got no answer (the cloud may have acted on them). */
    unanswered: number
  } | null
}

export interface FaultCounts {
  hubKills: number
  cloudKills: number
  brokerCuts: number
  apiCuts: number
}

const TERMINAL = new Set(['printed', 'failed', 'cancelled'])
export const isTerminal = (job: PrintJob) => TERMINAL.has(job.status)

/**
 * Counts, per job, the bytes that reached each simulated printer and holds them against the job's final
 * status and the answers the backend got (issue 6, point 10): nothing lost, nothing printed twice, nothing
 * reported `cancelled` (or failed other than `interrupted`) that reached the printer, no key made two jobs.
 */
export function judge(traces: JobTrace[], jobs: PrintJob[], received: Buffer[]) {
  const byId = new Map(jobs.map((job) => [job.print_job_id, job]))
  const answered = new Set(traces.flatMap((t) => [t.id, t.resentId ?? null]))
  /** Jobs that printed a request whose other job was dropped as their duplicate. */
  const duplicates = new Set<string>()
  const violations: string[] = []
  const failed: Record<string, number> = {}
  const tally = { printed: 0, cancelled: 0, failed: 0, interruptedWithBytes: 0, stuck: 0 }
  const cancels = { sent: 0, answered200: 0, answered202: 0, answered409: 0, cancelledAfter202: 0 }
  let resends = 0
  for (const t of traces) {
    const wrong = (what: string, extra: Record<string, unknown> = {}) =>
      violations.push(`job ${t.n} (${t.key}, ${t.id}): ${what} ${JSON.stringify(extra)}`)
    if (t.resent) resends++
    const answeredJob = t.id === null ? undefined : byId.get(t.id)
    // A job the hub dropped because the same request printed on its LAN (docs/lan-printing.md) printed as that
    // job: the request is judged by it.
    const final = answeredJob?.duplicate_of ? byId.get(answeredJob.duplicate_of) : answeredJob
    if (answeredJob?.duplicate_of) duplicates.add(answeredJob.duplicate_of)
    // The two sends met the two paths while the cloud did not know the hub's job yet: one of them is the other's
    // dropped copy.
    const resentJob = t.resentId === undefined ? undefined : byId.get(t.resentId)
    const resentElsewhere =
      (answeredJob?.duplicate_of != null && answeredJob.duplicate_of === t.resentId) ||
      (resentJob?.duplicate_of != null && resentJob.duplicate_of === t.id)
    if (t.resent === 'different' && !resentElsewhere)
      wrong('a resent request with the same key named another job')
    if (!final) {
      wrong('lost: accepted but not in the account')
      continue
    }
    const heads = occurrences(received[t.printer]!, t.head)
    const copies = occurrences(received[t.printer]!, t.payload)
    const elsewhere = received.reduce(
      (sum, bytes, i) => (i === t.printer ? sum : sum + occurrences(bytes, t.head)),
      0,
    )
    const seen = { status: final.status, reason: final.failure_reason, heads, copies, cancel: t.cancel }
    if (elsewhere > 0) wrong('reached another printer', { ...seen, elsewhere })
    if (heads > 1 || copies > 1) wrong('printed more than once', seen)
    if (final.status === 'printed') {
      tally.printed++
      if (copies !== 1) wrong('reported printed, but not exactly one whole copy reached the printer', seen)
    } else if (final.status === 'cancelled') {
      tally.cancelled++
      if (heads > 0) wrong('reported cancelled, but it reached the printer', seen)
    } else if (final.status === 'failed') {
      tally.failed++
      const reason = final.failure_reason ?? 'none'
      failed[reason] = (failed[reason] ?? 0) + 1
      if (reason === 'interrupted' && heads > 0) tally.interruptedWithBytes++
      if (reason !== 'interrupted' && heads > 0)
        wrong(`reported failed (${reason}), but it reached the printer`, seen)
    } else {
      tally.stuck++
      wrong('never reached a final status', seen)
    }
    if (!t.cancel) continue
    cancels.sent++
    const { status, answered: said, errorCode, unanswered } = t.cancel
    if (status === 200) {
      cancels.answered200++
      if (said !== 'cancelled' || final.status !== 'cancelled') wrong('cancel answered 200 but', seen)
    } else if (status === 202) {
      cancels.answered202++
      if (final.status === 'cancelled') cancels.cancelledAfter202++
      if (said !== 'pending' && said !== 'reserved')
        wrong('cancel answered 202 with a job not pending/reserved', seen)
    } else if (status === 409 && errorCode === 'print_job_not_cancellable') {
      cancels.answered409++
      // A 409 saying `cancelled` is right only when an earlier, unanswered attempt did the cancelling.
      const ownEarlierCancel = said === 'cancelled' && unanswered > 0 && final.status === 'cancelled'
      if (final.status === 'cancelled' && !ownEarlierCancel)
        wrong('cancel answered 409 but the job ended cancelled', seen)
      if (said === 'pending' || said === 'reserved') wrong('cancel answered 409 for a cancellable job', seen)
    } else {
      wrong('cancel got an unexpected answer', seen)
    }
  }
  const ids = traces.map((t) => t.id).filter((id) => id !== null)
  for (const id of new Set(ids.filter((id, i) => ids.indexOf(id) !== i)))
    violations.push(`job ${id} was answered to two different keys`)
  // Every request carried a key and got one job: any other job in the account came from a key used twice.
  // A job no request was answered with is allowed only as the cloud's copy of a request that printed on the LAN.
  const extra = jobs.filter(
    (job) =>
      !answered.has(job.print_job_id) &&
      !(job.status === 'cancelled' && job.duplicate_of != null && answered.has(job.duplicate_of)) &&
      !duplicates.has(job.print_job_id),
  )
  const droppedAsDuplicates = jobs.filter((job) => job.duplicate_of != null).length
  for (const job of extra)
    violations.push(
      `job ${job.print_job_id} (${job.status}, ${job.failure_reason}) was never answered to any request: ` +
        'a retried Idempotency-Key created a second job',
    )
  return {
    violations,
    figures: {
      jobs_accepted: traces.filter((t) => t.id !== null).length,
      printed: tally.printed,
      cancelled: tally.cancelled,
      failed: tally.failed,
      failed_by_reason: failed,
      interrupted: failed.interrupted ?? 0,
      interrupted_with_bytes: tally.interruptedWithBytes,
      not_final: tally.stuck,
      cancels_sent: cancels.sent,
      cancels_200: cancels.answered200,
      cancels_202: cancels.answered202,
      cancels_202_then_cancelled: cancels.cancelledAfter202,
      cancels_409: cancels.answered409,
      deliberate_resends: resends,
      keys_with_two_jobs: extra.length,
      dropped_as_duplicates: droppedAsDuplicates,
    },
  }
}

/** The figures a run prints (fault-and-race.ts adds the faults, retries and duration to the verdict's). */
export type FaultAndRaceFigures = ReturnType<typeof judge>['figures'] & {
  seed: number
  jobs_submitted: number
  hub_kills: number
  cloud_kills: number
  broker_link_cuts: number
  api_link_cuts: number
  create_retries: number
  cancel_retries: number
  idempotent_replays: number
  /** Creates the hub's LAN API took because the cloud gave no answer. */
  lan_creates: number
  violations: number
  duration_s: number
}

/** The figures as a few readable lines. */
export function summarize(f: FaultAndRaceFigures): string {
  const reasons = Object.entries(f.failed_by_reason)
    .map(([reason, count]) => `${reason} ${count}`)
    .join(', ')
  return [
    `fault and race, seed ${f.seed}, ${f.duration_s} s`,
    `  jobs: ${f.jobs_submitted} submitted, ${f.jobs_accepted} accepted; ${f.printed} printed, ${f.cancelled} cancelled, ` +
      `${f.failed} failed (${reasons || 'none'}); ${f.interrupted_with_bytes} interrupted with bytes at the printer; ${f.not_final} not final`,
    `  cancels: ${f.cancels_sent} sent: ${f.cancels_200} answered 200, ${f.cancels_202} 202 ` +
      `(${f.cancels_202_then_cancelled} of them ended cancelled), ${f.cancels_409} 409`,
    `  faults: ${f.hub_kills} hub kills, ${f.cloud_kills} cloud kills, ${f.broker_link_cuts} broker link cuts, ` +
      `${f.api_link_cuts} API link cuts`,
    `  retries: ${f.create_retries} creates, ${f.cancel_retries} cancels; ${f.idempotent_replays} idempotent replays ` +
      `(${f.deliberate_resends} deliberate resends); keys that made two jobs: ${f.keys_with_two_jobs}`,
    `  LAN: ${f.lan_creates} creates taken by the hub's LAN API; ${f.dropped_as_duplicates} cloud jobs dropped as their duplicates`,
    `  violations: ${f.violations}`,
  ].join('\n')
}
