import type { Logger } from 'pino'
import type { HubPayload } from '../../protocol/hub-messages.ts'
import { PROTOCOL_VERSION } from '../../protocol/hub-messages.ts'
import { HandlerRetry } from '../broker/handler-retry.ts'
import type { HubBus } from '../broker/hub-bus.ts'
import { type CancelReason, JobLifecycle, type JobLog } from '../print-jobs/lifecycle.ts'
import type { DispatchableJob } from '../storage/print-jobs.ts'
import type { Storage } from '../storage/storage.ts'
import { jobOffer } from './job-offer.ts'
import { SettleWaiters } from './settle-waiters.ts'

export interface DispatcherOptions {
  storage: Storage
  bus: HubBus
  logger: Logger
  publicUrl: string
  /** Jobs still pending this long after creation fail with `expired`. */
  pendingExpirySeconds: number
  /** How often to look for expired jobs; each step is a compare-and-set, safe on any number of nodes. */
  expirySweepMs?: number
  /** How long a cancel waits for the hub to confirm that it dropped the job. */
  cancelConfirmTimeoutMs: number
  /**
   * The queue every hub message is handled through, shared with the presence room (cloud/presence/), so that
   * one bound holds for all of them and they are taken in arrival order; one of its own by default.
   */
  handlers?: HandlerRetry
  /**
   * First delay before a failed hub message is handled again (doubling up to a minute), with a queue of its
   * own; tests shorten it.
   */
  retryBaseMs?: number
  /** Told after a job was created or its hub moved it on (webhook deliveries look for new events at once). */
  jobChanged?: () => void
}

const EXPIRY_BATCH = 500
/** A job this old that its online hub was never offered missed its offer (the create path offers at once). */
const MISSED_OFFER_GRACE_MS = 5000

/**
 * The cloud end of a job's way (docs/architecture.md: a job, end to end): offers jobs to hubs, re-offers everything unfinished
 * when a hub (re)connects (as cloud/presence/ tells it), asks hubs to drop jobs that are cancelled or expired,
 * and applies what hubs report of their jobs. The database is the source of truth; MQTT only carries
 * notifications; every status change goes through the job lifecycle (cloud/print-jobs/lifecycle.ts), so a
 * repeated or stale message changes nothing. A handler or timer that fails (a busy database, a full disk) is
 * logged and never takes the process down; hub messages are handled again later, which is safe because every
 * change is a compare-and-set.
 */
export class Dispatcher {
  readonly #o: DispatcherOptions
  readonly #lifecycle: JobLifecycle
  readonly #retry: HandlerRetry
  readonly #settled: SettleWaiters
  /** The loggers of cancel requests waiting for their hub: its confirmation is logged with the request id. */
  readonly #cancelLogs = new Map<string, JobLog>()
  #sweep: NodeJS.Timeout | undefined
  readonly #offering = new Set<Promise<void>>()

  constructor(options: DispatcherOptions) {
    this.#o = options
    this.#lifecycle = new JobLifecycle(options.storage.printJobs, options.logger)
    this.#retry = options.handlers ?? new HandlerRetry(options.logger, options.retryBaseMs)
    this.#settled = new SettleWaiters(
      async (id) => (await options.storage.printJobs.dispatchable(id))?.status,
    )
  }

  /** Resolves once every hub message received so far has been handled (or failed and awaits its retry). */
  handled(): Promise<void> {
    return this.#retry.settled()
  }

  get lifecycle(): JobLifecycle {
    return this.#lifecycle
  }

  async start(): Promise<void> {
    const { bus } = this.#o
    // Job reports: each is a compare-and-set, so every one is retried.
    await bus.subscribe('job-ack', (agentId, a) =>
      this.#retry.run('job-ack', agentId, null, a, () => this.#ack(agentId, a)),
    )
    await bus.subscribe('job-waiting', (agentId, w) =>
      this.#retry.run('job-waiting', agentId, `${agentId}/waiting/${w.print_job_id}`, w, () =>
        this.#waiting(agentId, w),
      ),
    )
    await bus.subscribe('job-status', (agentId, s) =>
      this.#retry.run('job-status', agentId, null, s, () => this.#status(agentId, s)),
    )
    await bus.subscribe('lan-job', (agentId, j) =>
      this.#retry.run('lan-job', agentId, null, j, () => this.#lanJob(agentId, j)),
    )
    const sweepMs =
      this.#o.expirySweepMs ?? Math.min(15_000, Math.max(250, (this.#o.pendingExpirySeconds * 1000) / 4))
    this.#sweep = setInterval(() => {
      // Several nodes take turns (Storage.exclusively); each change is a compare-and-set all the same.
      void this.#tracked(
        this.#o.storage
          .exclusively('pending-job-expiry', () => this.expireStale())
          .then(
            () => {},
            (error: unknown) => {
              this.#o.logger.error(
                { err: error },
                'pending-job expiry failed; it runs again at the next sweep',
              )
            },
          ),
      )
      void this.#tracked(
        this.#o.storage
          .exclusively('missed-offers', () => this.#offerMissed())
          .catch((error: unknown) => {
            this.#o.logger.error(
              { err: error },
              'offering missed jobs failed; it runs again at the next sweep',
            )
          }),
      )
    }, sweepMs)
    this.#sweep.unref()
  }

  /** Stops handling hub messages and sweeping; resolves once the handlers and offers under way have ended. */
  async stop(): Promise<void> {
    clearInterval(this.#sweep)
    this.#settled.stop()
    await Promise.all([this.#retry.stop(), ...this.#offering])
  }

  /** Offers not started by a hub message (new jobs, the sweep), which stop() waits for too. */
  #tracked(offering: Promise<void>): Promise<void> {
    this.#offering.add(offering)
    void offering.then(() => this.#offering.delete(offering))
    return offering
  }

  /** A new job on an online printer is stored offered, and offered to its hub here (jobCreated). */
  readonly offersNewJobs = true

  /**
   * A job was created: stored offered (its printer was online, its account active), it is sent to its hub
   * now; otherwise it is offered when its hub connects, or by the sweep. Nothing is read or written for it:
   * what the offer names came with the request. A failure to send never fails the request that created the
   * job: the hub is offered it again when it reconnects, and asked about it once it is silent (silent-jobs.ts).
   */
  async jobCreated(job: DispatchableJob, content?: Buffer): Promise<void> {
    this.#o.jobChanged?.()
    if (job.offered_at === null) return
    this.#o.logger.info(
      { print_job_id: job.print_job_id, printer_id: job.printer_id, status: job.status },
      'print job offered',
    )
    await this.#tracked(
      this.#send(
        job.agent_id,
        'job-offer',
        jobOffer(job, this.#o.publicUrl, this.#o.pendingExpirySeconds, content),
      ),
    )
  }

  /**
   * A cancel was requested for a job its hub may hold: asks the hub to drop it, and resolves once the job is
   * no longer pending or reserved (the hub dropped it, or reported that it had started), or after the
   * confirmation timeout (the hub is offline or slow; the request stays, and is sent again when it connects).
   */
  async cancelRequested(printJobId: string, log?: JobLog): Promise<void> {
    const job = await this.#o.storage.printJobs.dispatchable(printJobId)
    if (!job) return
    if (log) this.#cancelLogs.set(printJobId, log)
    try {
      const settled = this.#settled.wait(printJobId, this.#o.cancelConfirmTimeoutMs)
      await this.#askToDrop(job.agent_id, printJobId, 'cancelled')
      await settled
    } finally {
      if (log && this.#cancelLogs.get(printJobId) === log) this.#cancelLogs.delete(printJobId)
    }
  }

  /**
   * The hub's presence was recorded (cloud/presence/hub-presence.ts, while it handles that presence): it is
   * offered again every job still pending or reserved for it, or asked to drop the ones being cancelled; it
   * ignores what it already has.
   */
  async hubOnline(agentId: string): Promise<void> {
    const { storage, logger } = this.#o
    const unfinished = await storage.printJobs.unfinishedForAgent(agentId)
    logger.info({ agent_id: agentId, reoffered: unfinished.length }, 'hub online')
    // A hub's jobs are all of its account: whether it is active is read once.
    const first = unfinished[0]
    const accountActive = first !== undefined && (await storage.accounts.isActive(first.account_id))
    for (const job of unfinished) {
      if (job.cancel_requested_at !== null)
        await this.#askToDrop(agentId, job.print_job_id, job.cancel_reason ?? 'cancelled')
      else await this.#offer(job, false, accountActive)
    }
  }

  /**
   * Pending jobs created more than the expiry ago: one that no hub was offered fails with `expired` at once;
   * one that its hub may hold is expired by that hub (asked to drop it), since only the hub knows whether it
   * started printing. Returns the ids that failed here.
   */
  async expireStale(now = new Date()): Promise<string[]> {
    const { storage, pendingExpirySeconds } = this.#o
    const cutoff = new Date(now.getTime() - pendingExpirySeconds * 1000).toISOString()
    const at = now.toISOString()
    const expired: string[] = []
    for (const job of await storage.printJobs.pendingSince(cutoff, EXPIRY_BATCH)) {
      if (
        await this.#lifecycle.apply(job.print_job_id, 'expireUnoffered', {
          completed_at: at,
          failure_reason: 'expired',
        })
      ) {
        expired.push(job.print_job_id)
      } else if (
        job.cancel_requested_at === null &&
        (await this.#lifecycle.requestExpiry(job.print_job_id, now))
      ) {
        if ((await storage.agents.findById(job.agent_id))?.online)
          void this.#tracked(this.#askToDrop(job.agent_id, job.print_job_id, 'expired'))
      }
    }
    return expired
  }

  /** Jobs whose offer never went out although their hub is online (see jobCreated). */
  async #offerMissed(now = new Date()): Promise<void> {
    const cutoff = new Date(now.getTime() - MISSED_OFFER_GRACE_MS).toISOString()
    for (const job of await this.#o.storage.printJobs.unofferedToOnlineHubs(cutoff, EXPIRY_BATCH))
      await this.#offer(job, true)
  }

  /**
   * `missed`: the sweep's offer of a job never offered, sent only by the node whose claim applied.
   * `accountActive`: whether the job's account is active, where the caller read it already.
   */
  async #offer(job: DispatchableJob, missed = false, accountActive?: boolean): Promise<void> {
    const { publicUrl, pendingExpirySeconds } = this.#o
    // A suspended account's jobs are not offered (its hubs keep what they hold); the sweep offers the ones
    // never offered once it is resumed (docs/developer-platform.md).
    if (!(accountActive ?? (await this.#o.storage.accounts.isActive(job.account_id)))) return
    if (!(await this.#lifecycle.offered(job.print_job_id, new Date(), missed))) {
      if (missed) return
      // A cancel was requested meanwhile: the hub is asked to drop the job instead of being offered it.
      const now = await this.#o.storage.printJobs.dispatchable(job.print_job_id)
      if (now?.cancel_requested_at)
        await this.#askToDrop(job.agent_id, job.print_job_id, now.cancel_reason ?? 'cancelled')
      return
    }
    await this.#send(job.agent_id, 'job-offer', jobOffer(job, publicUrl, pendingExpirySeconds))
  }

  #askToDrop(agentId: string, printJobId: string, reason: CancelReason): Promise<void> {
    return this.#send(agentId, 'command', {
      v: PROTOCOL_VERSION,
      command: 'cancel_job',
      print_job_id: printJobId,
      reason,
    })
  }

  async #send<T extends 'job-offer' | 'command'>(agentId: string, topic: T, payload: HubPayload<T>) {
    try {
      await this.#o.bus.publish(agentId, topic, payload)
    } catch (error) {
      // Nothing is lost: the job stays in the database and is sent again when the hub reconnects.
      this.#o.logger.warn({ err: error, agent_id: agentId, topic }, 'publish to hub failed')
    }
  }

  // A hub's reports on a job are each one statement in the common case: the change applies only to a job on a
  // printer of that hub (a report on another hub's job changes nothing). The job is read only when it did not
  // apply, to tell the hub again what the cloud asked of it.

  async #ack(agentId: string, ack: HubPayload<'job-ack'>): Promise<void> {
    const reserved = await this.#lifecycle.reserve(ack.print_job_id, agentId, ack.at)
    // The hub spooled a job that is to be dropped (or that ended here without it): tell it again.
    if (reserved) {
      this.#o.jobChanged?.()
      if (reserved.cancel_requested_at !== null)
        await this.#askToDrop(agentId, ack.print_job_id, reserved.cancel_reason ?? 'cancelled')
      return
    }
    const job = await this.#o.storage.printJobs.dispatchable(ack.print_job_id)
    if (!job || job.agent_id !== agentId) return
    if (job.cancel_requested_at !== null)
      await this.#askToDrop(agentId, job.print_job_id, job.cancel_reason ?? 'cancelled')
    else if (job.status === 'cancelled' || job.status === 'failed')
      await this.#askToDrop(agentId, job.print_job_id, job.status === 'failed' ? 'expired' : 'cancelled')
  }

  async #waiting(agentId: string, report: HubPayload<'job-waiting'>): Promise<void> {
    await this.#lifecycle.apply(
      report.print_job_id,
      'wait',
      { waiting_reason: report.reason },
      undefined,
      agentId,
    )
  }

  async #status(agentId: string, report: HubPayload<'job-status'>): Promise<void> {
    const { logger } = this.#o
    const id = report.print_job_id
    const applied = await this.#lifecycle.hubReported(
      id,
      report.status,
      report.at,
      {
        reason: report.failure_reason,
        detail: report.detail,
        duplicateOf: report.duplicate_of,
        unasked: report.on_lan === true,
      },
      (report.status === 'cancelled' && this.#cancelLogs.get(id)) || logger,
      agentId,
    )
    if (applied) {
      this.#settled.changed(id)
      this.#o.jobChanged?.()
      return
    }
    if (report.status !== 'printing' && report.status !== 'printed') return
    // Cannot happen since cancels are confirmed by the hub; kept loud in case it ever does.
    const job = await this.#o.storage.printJobs.dispatchable(id)
    if (job?.agent_id === agentId && job.status === 'cancelled')
      logger.error({ print_job_id: id, reported: report.status }, 'hub printed a cancelled job')
  }

  /**
   * A job a hub took on its LAN (docs/lan-printing.md): recorded once with the hub's id for it, then moved to
   * the status the report gives by the lifecycle's rules, so that reports handled in any order, on any node,
   * only move it forward.
   */
  async #lanJob(agentId: string, report: HubPayload<'lan-job'>): Promise<void> {
    const { logger } = this.#o
    const recorded = await this.#o.storage.printJobs.recordLanJob(agentId, report)
    const line = { print_job_id: report.print_job_id, printer_id: report.printer_id, agent_id: agentId }
    if (recorded === 'refused') {
      logger.warn(line, 'LAN job refused: not on a printer of the hub that reported it')
      return
    }
    if (recorded === 'recorded')
      logger.info({ ...line, status: 'reserved', origin: 'lan' }, 'LAN print job recorded')
    const applied =
      report.status !== 'reserved' &&
      (await this.#lifecycle.hubReported(
        report.print_job_id,
        report.status,
        report.at,
        { reason: report.failure_reason, detail: report.detail, unasked: true },
        logger,
        agentId,
      ))
    if (recorded === 'recorded' || applied) {
      this.#settled.changed(report.print_job_id)
      this.#o.jobChanged?.()
    }
  }
}
