import type { DispatchableJob } from '../storage/print-jobs.ts'
import type { JobLog } from './lifecycle.ts'

/** What is told of each new job: the dispatcher, which offers it to its hub. */
export interface NewJobListener {
  /**
   * Whether a job is offered to its hub as it is created, when its printer is online: it is then stored offered
   * (JobLifecycle.create), and jobCreated sends the offer.
   */
  readonly offersNewJobs: boolean
  /**
   * The job as its hub is offered it (`offered_at` set when it was stored offered), and its document's bytes
   * when the request carried them.
   */
  jobCreated(job: DispatchableJob, content?: Buffer): Promise<void>
}

/** What the rest of the cloud hears about jobs (the dispatcher tells hubs); nothing by default. */
export interface JobEvents extends NewJobListener {
  /**
   * Asks the job's hub to drop it; resolves once the hub answered, or after the confirmation timeout. The
   * hub's confirmation is logged with `log` (the request's).
   */
  cancelRequested(printJobId: string, log?: JobLog): Promise<void>
}
