import type { Logger } from 'pino'
import type { HubPayload } from '../../protocol/hub-messages.ts'
import type { AgentCommand } from '../session/mqtt-session.ts'
import type { Spool } from './spool.ts'

export interface JobRequestsOptions {
  spool: Spool
  /** The worker of a printer of this hub, to wake when its queue changed; undefined for another printer. */
  worker(printerKey: string): { wake(): void } | undefined
  logger: Logger
}

/**
 * What the cloud asks of jobs: offers go into the spool and are acknowledged from there (the outbox), and a
 * `cancel_job` drops a job that has not started. Each is one transaction of the spool; the printer's worker
 * is woken to print, or to cut a wait short.
 */
export class JobRequests {
  readonly #o: JobRequestsOptions

  constructor(options: JobRequestsOptions) {
    this.#o = options
  }

  offer(offer: HubPayload<'job-offer'>): void {
    const { spool, logger } = this.#o
    const job = { print_job_id: offer.print_job_id, printer_id: offer.printer_id }
    if (spool.accept(offer) && spool.find(offer.print_job_id)?.state === 'queued')
      logger.info({ ...job, status: 'reserved' }, 'print job reserved')
    const worker = this.#o.worker(offer.printer_key)
    if (worker) {
      worker.wake()
      return
    }
    const failed = spool.fail(
      offer.print_job_id,
      'queued',
      'printer_unreachable',
      'the printer is not attached to this hub',
    )
    if (failed)
      logger.warn(
        {
          ...job,
          status: 'failed',
          failure_reason: 'printer_unreachable',
          detail: `this hub has no printer ${offer.printer_key}`,
        },
        'print job failed',
      )
  }

  /**
   * Dropping and starting to print are each one transaction of the spool: whichever comes first wins, and
   * the answer tells the cloud which (docs/job-lifecycle.md).
   */
  cancel(command: Extract<AgentCommand, { command: 'cancel_job' }>): void {
    const { spool, logger } = this.#o
    const job = spool.find(command.print_job_id)
    const reason = command.reason ?? 'cancelled'
    const state = spool.drop(command.print_job_id, reason)
    const dropped = job === undefined || job.state === 'queued'
    const line = { print_job_id: command.print_job_id, printer_id: job?.offer.printer_id }
    if (!dropped) logger.info({ ...line, status: state }, 'print job not dropped: it had started')
    else if (reason === 'expired')
      logger.info({ ...line, status: 'failed', failure_reason: 'expired' }, 'print job expired')
    else logger.info({ ...line, status: 'cancelled' }, 'print job cancelled')
    if (job) this.#o.worker(job.printer_key)?.wake()
  }
}
