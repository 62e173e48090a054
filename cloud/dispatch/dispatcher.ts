import type { Logger } from 'pino'
import type { HubPayload } from '../../protocol/hub-messages.ts'
import { PROTOCOL_VERSION } from '../../protocol/hub-messages.ts'
import type { PrintJob } from '../../protocol/print-job.ts'
import type { HubBus } from '../broker/hub-bus.ts'
import type { Storage } from '../storage/storage.ts'
import { jobOffer } from './job-offer.ts'

export interface DispatcherOptions {
  storage: Storage
  bus: HubBus
  logger: Logger
  publicUrl: string
  /** Jobs still pending this long after creation fail with `expired`. */
  pendingExpirySeconds: number
  /** How often to look for expired jobs; the sweep is one idempotent UPDATE, safe on any number of nodes. */
  expirySweepMs?: number
}

/**
 * The cloud end of DESIGN's "one print job, end to end": offers jobs to hubs, re-offers everything unfinished
 * when a hub (re)connects, and applies what hubs report. The database is the source of truth; MQTT only
 * carries notifications, and each status change is a compare-and-set, so a repeated or stale message
 * changes nothing.
 */
export class Dispatcher {
  readonly #o: DispatcherOptions
  #sweep: NodeJS.Timeout | undefined

  constructor(options: DispatcherOptions) {
    this.#o = options
  }

  async start(): Promise<void> {
    const { bus } = this.#o
    await bus.subscribe('presence', (agentId, p) => this.#presence(agentId, p))
    await bus.subscribe('state', (agentId, s) => this.#state(agentId, s))
    await bus.subscribe('job-ack', (agentId, a) => this.#ack(agentId, a))
    await bus.subscribe('job-status', (agentId, s) => this.#status(agentId, s))
    const sweepMs =
      this.#o.expirySweepMs ?? Math.min(15_000, Math.max(250, (this.#o.pendingExpirySeconds * 1000) / 4))
    this.#sweep = setInterval(() => this.expireStale(), sweepMs)
    this.#sweep.unref()
  }

  stop(): void {
    clearInterval(this.#sweep)
  }

  /** A job was created: tell its hub. A hub that is offline gets it when it reconnects. */
  async jobCreated(job: PrintJob): Promise<void> {
    const dispatchable = this.#o.storage.printJobs.dispatchable(job.print_job_id)
    if (dispatchable) await this.#offer(dispatchable.agent_id, dispatchable)
  }

  /** A pending or reserved job was cancelled: its hub drops it from the spool. */
  async jobCancelled(printJobId: string): Promise<void> {
    const job = this.#o.storage.printJobs.dispatchable(printJobId)
    if (!job) return
    await this.#send(job.agent_id, 'command', {
      v: PROTOCOL_VERSION,
      command: 'cancel_job',
      print_job_id: printJobId,
    })
  }

  expireStale(now = new Date()): string[] {
    const cutoff = new Date(now.getTime() - this.#o.pendingExpirySeconds * 1000).toISOString()
    const expired = this.#o.storage.printJobs.expirePending(cutoff, now.toISOString())
    if (expired.length > 0) this.#o.logger.info({ print_job_ids: expired }, 'pending jobs expired')
    return expired
  }

  async #offer(agentId: string, job: Parameters<typeof jobOffer>[0]): Promise<void> {
    const { publicUrl, pendingExpirySeconds } = this.#o
    await this.#send(agentId, 'job-offer', jobOffer(job, publicUrl, pendingExpirySeconds))
  }

  async #send<T extends 'job-offer' | 'command'>(agentId: string, topic: T, payload: HubPayload<T>) {
    try {
      await this.#o.bus.publish(agentId, topic, payload)
    } catch (error) {
      // Nothing is lost: the job stays in the database and is offered again when the hub reconnects.
      this.#o.logger.warn({ err: error, agent_id: agentId, topic }, 'publish to hub failed')
    }
  }

  async #presence(agentId: string, presence: HubPayload<'presence'>): Promise<void> {
    const { storage, logger } = this.#o
    if (!storage.agents.findById(agentId)) return
    const at = new Date().toISOString()
    if (!presence.online) {
      if (storage.agents.markOffline(agentId, presence.session, at)) {
        storage.printers.setAgentPrintersOffline(agentId, at)
        logger.info({ agent_id: agentId }, 'hub offline')
      }
      return
    }
    storage.agents.markOnline(agentId, presence.session, at)
    const unfinished = storage.printJobs.unfinishedForAgent(agentId)
    logger.info({ agent_id: agentId, reoffered: unfinished.length }, 'hub online')
    for (const job of unfinished) await this.#offer(agentId, job)
  }

  #state(agentId: string, state: HubPayload<'state'>): void {
    const { storage } = this.#o
    const agent = storage.agents.findById(agentId)
    if (!agent) return
    const at = new Date().toISOString()
    storage.agents.setReportedVersion(agentId, state.agent_version, at)
    storage.printers.syncFromHub(agent.account_id, agentId, state.printers, at, agent.online)
  }

  async #ack(agentId: string, ack: HubPayload<'job-ack'>): Promise<void> {
    const { storage } = this.#o
    const job = storage.printJobs.dispatchable(ack.print_job_id)
    if (!job || job.agent_id !== agentId) return
    if (job.status === 'cancelled') {
      // The hub spooled a job that was cancelled meanwhile: tell it again to drop it.
      await this.jobCancelled(job.print_job_id)
      return
    }
    storage.printJobs.transition(job.print_job_id, ['pending'], 'reserved', { reserved_at: ack.at })
  }

  #status(agentId: string, report: HubPayload<'job-status'>): void {
    const { storage, logger } = this.#o
    const job = storage.printJobs.dispatchable(report.print_job_id)
    if (!job || job.agent_id !== agentId) return
    const at = report.at
    const applied =
      report.status === 'printing'
        ? storage.printJobs.transition(job.print_job_id, ['pending', 'reserved'], 'printing', {
            reserved_at: at,
            started_at: at,
          })
        : storage.printJobs.transition(job.print_job_id, ['pending', 'reserved', 'printing'], report.status, {
            reserved_at: at,
            ...(report.status === 'printed' && { started_at: at }),
            completed_at: at,
            ...(report.status === 'failed' && { failure_reason: report.failure_reason ?? 'printer_error' }),
          })
    if (!applied && job.status === 'cancelled' && report.status !== 'failed') {
      logger.warn(
        { print_job_id: job.print_job_id, reported: report.status },
        'hub printed a job cancelled meanwhile',
      )
    }
  }
}
