import { ApiError } from '../../print-api/api-error.ts'
import type { PrintJobStatus } from '../../protocol/enums.ts'
import type { PrintJob } from '../../protocol/print-job.ts'
import type { PrintJobRepository } from '../storage/print-jobs.ts'
import type { JobEvents } from './job-events.ts'
import type { JobLifecycle, JobLog } from './lifecycle.ts'

/**
 * What a cancel did (docs/job-lifecycle.md, "Cancelling: the hub decides"): `cancelled`, none of the job
 * reached the printer; `requested`, its hub has not answered yet and the request stands.
 */
export type CancelOutcome = { outcome: 'cancelled' | 'requested'; job: PrintJob }

/** The refusal of a cancel of a job that is printing or final (the API's 409). */
export function notCancellable(status: PrintJobStatus | undefined): ApiError {
  return new ApiError('print_job_not_cancellable', `A ${status} job cannot be cancelled.`, { status })
}

export interface CancelDependencies {
  jobs: PrintJobRepository
  lifecycle: JobLifecycle
  jobEvents: JobEvents
}

/**
 * Cancels the account's job as the API's cancel operation does, for the API and the console alike: a job no
 * hub was offered is cancelled here; otherwise only its hub can say that none of its bytes reached the
 * printer, so the cancel is recorded and confirmed (or refused) by the hub. Throws `print_job_not_found` for
 * an id that names no job of the account and `print_job_not_cancellable` for a job printing or final.
 */
export async function cancelPrintJob(
  { jobs, lifecycle, jobEvents }: CancelDependencies,
  accountId: string,
  printJobId: string,
  log?: JobLog,
): Promise<CancelOutcome> {
  const job = await jobs.findById(accountId, printJobId)
  if (!job) throw new ApiError('print_job_not_found', 'No such print job.')
  const reread = async () => {
    const now = await jobs.findById(accountId, printJobId)
    if (!now) throw new ApiError('print_job_not_found', 'No such print job.')
    return now
  }
  const now = new Date()
  if (await lifecycle.apply(printJobId, 'cancelUnoffered', { completed_at: now.toISOString() }, log))
    return { outcome: 'cancelled', job: await reread() }
  if (!(await lifecycle.requestCancel(printJobId, 'cancelled', now, log)))
    throw notCancellable((await jobs.findById(accountId, printJobId))?.status)
  await jobEvents.cancelRequested(printJobId, log)
  const after = await reread()
  if (after.status === 'cancelled') return { outcome: 'cancelled', job: after }
  if (after.status === 'pending' || after.status === 'reserved') return { outcome: 'requested', job: after }
  throw notCancellable(after.status)
}
