import { readdir, rm } from 'node:fs/promises'
import { arch, hostname, platform } from 'node:os'
import path from 'node:path'
import type { Logger } from 'pino'
import type { HubPayload, HubUpdate } from '../protocol/hub-messages.ts'
import { PROTOCOL_VERSION } from '../protocol/hub-messages.ts'
import { CloudClient } from './cloud/cloud-client.ts'
import type { HubIdentity } from './cloud/identity.ts'
import { PrinterWorker } from './jobs/printer-worker.ts'
import { Spool } from './jobs/spool.ts'
import type { AnyPrinterSpec } from './printers/ipp-printer-uri.ts'
import type { TransportSpec } from './printers/printer-spec.ts'
import { PrinterRegistry } from './printers/registry.ts'
import { RenderPool } from './render/render-pool.ts'
import { type AgentCommand, MqttSession, PRESENCE_CONFIRM_MS } from './session/mqtt-session.ts'
import type { Transport } from './transports/transport.ts'

export const AGENT_VERSION = '0.1.0'
const HOUSEKEEPING_MS = 3600_000
const KEEP_FINISHED_MS = 7 * 24 * 3600_000

export interface AgentTimings {
  /** Health of idle printers is polled this often. */
  healthIntervalMs: number
  statusTimeoutMs: number
  paperWaitTimeoutMs: number
  unreachableTimeoutMs: number
  recheckMs: number
  /** Ghostscript's time to render one PDF (docs/pdf-printing.md). */
  renderDeadlineMs: number
  /** How long the hub waits for the cloud to confirm its presence before announcing itself again. */
  presenceConfirmMs: number
}

export const DEFAULT_TIMINGS: AgentTimings = {
  healthIntervalMs: 30_000,
  statusTimeoutMs: 2_000,
  paperWaitTimeoutMs: 10 * 60_000,
  unreachableTimeoutMs: 5 * 60_000,
  recheckMs: 5_000,
  renderDeadlineMs: 60_000,
  presenceConfirmMs: PRESENCE_CONFIRM_MS,
}

export interface AgentOptions {
  identity: HubIdentity
  mqttUrl: string
  keepaliveSeconds: number
  dataDir: string
  printers: AnyPrinterSpec[]
  createTransport(spec: TransportSpec): Transport
  describe(spec: AnyPrinterSpec): string
  logger: Logger
  timings?: Partial<AgentTimings>
  /** Render worker processes shared by the printers (HUB_RENDER_WORKERS); 2 by default. */
  renderWorkers?: number
  /** The self-update (hub/update/hub-updater.ts): told of each connect and of `run_release`. */
  updates?: AgentUpdates
}

export interface AgentUpdates {
  /** Whether this hub can update itself (it runs from an installed release). */
  readonly updatable: boolean
  connected(): void
  runRelease(version: string): void
  report(): HubUpdate | undefined
}

/** Two: one printer's slow PDF does not hold another's, and a Pi keeps its memory. */
export const DEFAULT_RENDER_WORKERS = 2

/**
 * The hub: its spool, its printers and one MQTT session, wired together. Offers go into the spool and are
 * acknowledged from there; each printer's worker prints its queue; every report to the cloud goes through
 * the spool's outbox and is deleted only when the broker acknowledged it.
 */
export class HubAgent {
  readonly #o: AgentOptions
  readonly #t: AgentTimings
  readonly #spool: Spool
  readonly #registry: PrinterRegistry
  readonly #session: MqttSession
  readonly #workers = new Map<string, PrinterWorker>()
  readonly #cloud: CloudClient
  readonly #renderer: RenderPool
  #poller: NodeJS.Timeout | undefined
  #housekeeping: NodeJS.Timeout | undefined
  #flushing: Promise<void> | undefined
  #flushAgain = false
  #stopped = false

  constructor(options: AgentOptions) {
    this.#o = options
    this.#t = { ...DEFAULT_TIMINGS, ...options.timings }
    const { identity, logger } = options
    this.#spool = new Spool(path.join(options.dataDir, 'spool.sqlite'))
    this.#cloud = new CloudClient(identity.cloud_url, identity.credential)
    this.#renderer = new RenderPool(options.renderWorkers ?? DEFAULT_RENDER_WORKERS, {
      logger: logger.child({ name: 'render' }),
    })
    this.#registry = new PrinterRegistry(options.printers, {
      createTransport: options.createTransport,
      describe: options.describe,
      statusTimeoutMs: this.#t.statusTimeoutMs,
      onChange: () => this.#publishState(),
      logger,
    })
    this.#session = new MqttSession({
      mqttUrl: options.mqttUrl,
      agentId: identity.agent_id,
      credential: identity.credential,
      keepaliveSeconds: options.keepaliveSeconds,
      logger: logger.child({ name: 'mqtt' }),
      onConnected: () => {
        this.#o.updates?.connected()
        this.#publishState()
        void this.flush()
      },
      onOffer: (offer) => this.#offer(offer),
      onCommand: (command) => this.#command(command),
      lookUpBroker: async () => (await this.#cloud.connection()).mqtt_url,
      presenceConfirmMs: this.#t.presenceConfirmMs,
    })
  }

  /** Sends the state again (the update's progress changed). */
  stateChanged(): void {
    this.#publishState()
  }

  start(): void {
    if (this.#spool.version.newer)
      this.#o.logger.info(
        { spool_version: this.#spool.version.now },
        'the spool was written by a newer release; this one reads it as it is',
      )
    for (const printJobId of this.#spool.recoverInterrupted()) {
      this.#o.logger.warn(
        {
          print_job_id: printJobId,
          printer_id: this.#spool.find(printJobId)?.offer.printer_id,
          status: 'failed',
          failure_reason: 'interrupted',
          detail: 'the hub stopped while printing it; it is not printed again',
        },
        'print job failed',
      )
    }
    for (const key of this.#registry.keys()) {
      this.#workers.set(
        key,
        new PrinterWorker(key, {
          spool: this.#spool,
          registry: this.#registry,
          download: (url, sha, size) =>
            this.#cloud.download(url, sha, size, path.join(this.#o.dataDir, 'documents')),
          logger: this.#o.logger.child({ printer: key }),
          paperWaitTimeoutMs: this.#t.paperWaitTimeoutMs,
          unreachableTimeoutMs: this.#t.unreachableTimeoutMs,
          recheckMs: this.#t.recheckMs,
          statusTimeoutMs: this.#t.statusTimeoutMs,
          renderer: this.#renderer,
          renderDeadlineMs: this.#t.renderDeadlineMs,
          flush: () => this.flush(),
        }),
      )
    }
    this.#session.start()
    for (const key of this.#spool.printerKeysWithWork()) this.#workers.get(key)?.wake()
    this.#pollHealth()
    void this.#tidy()
    this.#housekeeping = setInterval(() => void this.#tidy(), HOUSEKEEPING_MS)
    this.#housekeeping.unref()
  }

  /** Forgets jobs finished a week ago and deletes downloaded documents no unfinished job needs. */
  async #tidy(): Promise<void> {
    try {
      this.#spool.prune(new Date(Date.now() - KEEP_FINISHED_MS))
      const dir = path.join(this.#o.dataDir, 'documents')
      const inUse = this.#spool.documentsInUse()
      const files = await readdir(dir).catch(() => [] as string[])
      for (const file of files) {
        if (!inUse.has(file) && !file.endsWith('.part')) await rm(path.join(dir, file), { force: true })
      }
    } catch (error) {
      if (!this.#stopped) this.#o.logger.warn({ err: error }, 'housekeeping failed')
    }
  }

  async stop(): Promise<void> {
    this.#stopped = true
    clearTimeout(this.#poller)
    clearInterval(this.#housekeeping)
    await Promise.all([...this.#workers.values()].map((w) => w.stop()))
    await this.#renderer.stop()
    await this.flush()
    await this.#session.stop()
    this.#spool.close()
  }

  /** Sends every outbox message, in order, each deleted once the broker acknowledged it. */
  flush(): Promise<void> {
    if (this.#flushing !== undefined) {
      this.#flushAgain = true
      return this.#flushing
    }
    this.#flushing = (async () => {
      do {
        this.#flushAgain = false
        for (const message of this.#spool.outbox()) {
          if (!this.#session.connected) return
          try {
            await this.#session.publish(message.topic, message.payload)
          } catch {
            return // sent again after the next connect
          }
          this.#spool.delivered(message.seq)
        }
      } while (this.#flushAgain || this.#spool.outbox(1).length > 0)
    })()
      .catch((error: unknown) => {
        // Whatever is left stays in the outbox and goes with the next flush.
        if (!this.#stopped) this.#o.logger.warn({ err: error }, 'outbox flush failed')
      })
      .finally(() => {
        this.#flushing = undefined
      })
    return this.#flushing
  }

  #offer(offer: HubPayload<'job-offer'>): void {
    const job = { print_job_id: offer.print_job_id, printer_id: offer.printer_id }
    if (this.#spool.accept(offer) && this.#spool.find(offer.print_job_id)?.state === 'queued')
      this.#o.logger.info({ ...job, status: 'reserved' }, 'print job reserved')
    const worker = this.#workers.get(offer.printer_key)
    if (!worker) {
      const failed = this.#spool.fail(
        offer.print_job_id,
        'queued',
        'printer_unreachable',
        'the printer is not attached to this hub',
      )
      if (failed)
        this.#o.logger.warn(
          {
            ...job,
            status: 'failed',
            failure_reason: 'printer_unreachable',
            detail: `this hub has no printer ${offer.printer_key}`,
          },
          'print job failed',
        )
    }
    void this.flush()
    worker?.wake()
  }

  #command(command: AgentCommand): void {
    if (command.command === 'refresh_state') {
      this.#publishState()
      return
    }
    if (command.command === 'run_release') {
      this.#o.updates?.runRelease(command.version)
      return
    }
    // Dropping and starting to print are each one transaction of the spool: whichever comes first wins,
    // and the answer tells the cloud which (docs/job-lifecycle.md).
    const job = this.#spool.find(command.print_job_id)
    const reason = command.reason ?? 'cancelled'
    const state = this.#spool.drop(command.print_job_id, reason)
    const dropped = job === undefined || job.state === 'queued'
    const line = { print_job_id: command.print_job_id, printer_id: job?.offer.printer_id }
    if (!dropped) this.#o.logger.info({ ...line, status: state }, 'print job not dropped: it had started')
    else if (reason === 'expired')
      this.#o.logger.info({ ...line, status: 'failed', failure_reason: 'expired' }, 'print job expired')
    else this.#o.logger.info({ ...line, status: 'cancelled' }, 'print job cancelled')
    void this.flush()
    if (job) this.#workers.get(job.printer_key)?.wake()
  }

  #publishState(): void {
    if (!this.#session.connected) return
    const update = this.#o.updates?.report()
    this.#session
      .publish('state', {
        v: PROTOCOL_VERSION,
        agent_version: AGENT_VERSION,
        host: { hostname: hostname(), platform: platform(), arch: arch() },
        printers: this.#registry.report(),
        ...(update && { update }),
        ...(this.#o.updates?.updatable && { updatable: true }),
      })
      .catch((error: unknown) => this.#o.logger.debug({ err: error }, 'state not sent'))
  }

  /**
   * Idle printers are asked for their health now and then; busy ones report it before each job. Each round
   * ends with a state report even when nothing changed, so the cloud's `last_seen_at` and each printer's
   * `health.checked_at` stay fresh and a live hub can be told from a dead one.
   */
  #pollHealth(): void {
    const poll = async () => {
      for (const key of this.#registry.keys()) {
        if (!this.#stopped && !this.#workers.get(key)?.busy) await this.#registry.refresh(key).catch(() => {})
      }
      this.#publishState()
      if (!this.#stopped) this.#poller = setTimeout(poll, this.#t.healthIntervalMs)
    }
    this.#poller = setTimeout(poll, 0)
  }
}
