import type { Logger } from 'pino'
import { PROTOCOL_VERSION } from '../../protocol/hub-messages.ts'
import type { HubBus } from '../broker/hub-bus.ts'
import type { DispatchableJob } from '../storage/print-jobs.ts'
import type { Storage } from '../storage/storage.ts'
import { jobOffer } from './job-offer.ts'

export interface SilentJobsOptions {
  storage: Storage
  bus: HubBus
  logger: Logger
  publicUrl: string
  pendingExpirySeconds: number
  /** A job its hub holds is asked about once nothing was heard of it for this long (default SILENT_MS). */
  silentMs?: number
  /** How often to look (default: every half of silentMs). */
  intervalMs?: number
}

const BATCH = 500
/** How long nothing was heard of a job before its hub is asked about it (the cloud's SILENT_JOB_MS setting). */
export const SILENT_MS = 30_000
/** Each job is asked about again at doubling intervals up to this (a job queued behind a long one is quiet). */
const MAX_INTERVAL_MS = 10 * 60_000

/**
 * Asks hubs again about the jobs they hold of which nothing was heard for a while, because a hub's report can
 * be lost after the broker took it: a cloud node killed after the broker delivered the report and before it
 * was recorded (docs/architecture.md, "What a node that dies had taken"). The hub's answer is its current state of the job,
 * which it sends whatever it was asked (hub/jobs/spool.ts): a repeated offer of a job it has is acknowledged
 * again, or its final status sent again; a `cancel_job` of a job that started is answered with `printing` or
 * the final status. A job that started is asked with `cancel_job`, never offered again, so that a hub that
 * lost its spool cannot print it twice; a job whose cancel was requested is asked to be dropped again. Every
 * answer is a compare-and-set, so a repeated one changes nothing. The nodes take turns
 * (Storage.exclusively); each node asks about a job at doubling intervals.
 */
export class SilentJobs {
  readonly #o: SilentJobsOptions
  readonly #next = new Map<string, { at: number; intervalMs: number }>()
  #timer: NodeJS.Timeout | undefined
  #running: Promise<void> | undefined

  constructor(options: SilentJobsOptions) {
    this.#o = options
  }

  start(): void {
    const silentMs = this.#o.silentMs ?? SILENT_MS
    this.#timer = setInterval(
      () => {
        if (this.#running !== undefined) return
        this.#running = this.#o.storage
          .exclusively('silent-jobs', () => this.askAgain())
          .then(
            () => {},
            (error: unknown) =>
              this.#o.logger.error(
                { err: error },
                'asking hubs about silent jobs failed; the next pass tries again',
              ),
          )
          .finally(() => {
            this.#running = undefined
          })
      },
      this.#o.intervalMs ?? Math.max(250, silentMs / 2),
    )
    this.#timer.unref()
  }

  async stop(): Promise<void> {
    clearInterval(this.#timer)
    await this.#running
  }

  /** One pass: the ids of the jobs asked about. */
  async askAgain(now = Date.now()): Promise<string[]> {
    const silentMs = this.#o.silentMs ?? SILENT_MS
    const jobs = await this.#o.storage.printJobs.silentAtOnlineHubs(
      new Date(now - silentMs).toISOString(),
      BATCH,
    )
    const silent = new Set(jobs.map((job) => job.print_job_id))
    for (const id of this.#next.keys()) if (!silent.has(id)) this.#next.delete(id)
    const asked: string[] = []
    for (const job of jobs) {
      const next = this.#next.get(job.print_job_id)
      if (next && now < next.at) continue
      const intervalMs = next ? Math.min(MAX_INTERVAL_MS, next.intervalMs * 2) : silentMs
      this.#next.set(job.print_job_id, { at: now + intervalMs, intervalMs })
      try {
        await this.#ask(job)
        asked.push(job.print_job_id)
      } catch (error) {
        this.#o.logger.warn({ err: error, print_job_id: job.print_job_id }, 'asking a hub about a job failed')
      }
    }
    if (asked.length > 0) this.#o.logger.info({ jobs: asked.length }, 'hubs asked about silent jobs')
    return asked
  }

  #ask(job: DispatchableJob): Promise<void> {
    const { bus, publicUrl, pendingExpirySeconds } = this.#o
    if (job.status === 'printing' || job.cancel_requested_at !== null)
      return bus.publish(job.agent_id, 'command', {
        v: PROTOCOL_VERSION,
        command: 'cancel_job',
        print_job_id: job.print_job_id,
        reason: job.cancel_reason ?? 'cancelled',
      })
    return bus.publish(job.agent_id, 'job-offer', jobOffer(job, publicUrl, pendingExpirySeconds))
  }
}
