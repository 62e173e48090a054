import path from 'node:path'
import type { Logger } from 'pino'
import { CloudClient } from './cloud/cloud-client.ts'
import type { HubIdentity } from './cloud/identity.ts'
import { HubEvents } from './hub-events.ts'
import { Housekeeping } from './jobs/housekeeping.ts'
import { JobRequests } from './jobs/job-requests.ts'
import { keepOfferedDocument } from './jobs/offered-document.ts'
import { PrinterWorker } from './jobs/printer-worker.ts'
import { Spool } from './jobs/spool.ts'
import { LanServer, type LanServerOptions } from './lan/lan-server.ts'
import { HealthPoller } from './printers/health-poller.ts'
import type { AnyPrinterSpec } from './printers/ipp-printer-uri.ts'
import type { TransportSpec } from './printers/printer-spec.ts'
import { PrinterRegistry } from './printers/registry.ts'
import { RenderPool } from './render/render-pool.ts'
import type { HubSession, SessionHandlers } from './session/hub-session.ts'
import { type AgentCommand, MqttSession, PRESENCE_CONFIRM_MS } from './session/mqtt-session.ts'
import { OutboxPump } from './session/outbox-pump.ts'
import { StateReport, type UpdateReport } from './session/state-report.ts'
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
  /** The print API on the hub's LAN, while the cloud enables it for the hub (docs/lan-printing.md). */
  lan?: Pick<LanServerOptions, 'port' | 'host' | 'addresses' | 'advertise' | 'refreshMs'>
  /** The session with the cloud; an MqttSession on `mqttUrl` by default (unit tests pass a fake). */
  openSession?(handlers: SessionHandlers): HubSession
  /** The cloud's agent API; a CloudClient on the identity's cloud URL by default. */
  cloud?: HubCloud
}

export interface AgentUpdates extends UpdateReport {
  connected(): void
  runRelease(version: string): void
}

/** What the hub asks of the cloud's agent API once it runs. */
export type HubCloud = Pick<CloudClient, 'download' | 'connection' | 'lanCredentials'>

/** Two: one printer's slow PDF does not hold another's, and a Pi keeps its memory. */
export const DEFAULT_RENDER_WORKERS = 2

/**
 * The hub: its spool, its printers and one session with the cloud, and the parts that connect them, each
 * with a start and a stop. Offers and cancels go into the spool (JobRequests); each printer's worker prints
 * its queue; every report to the cloud goes into the spool's outbox, which the OutboxPump sends whenever it
 * gains messages and after every connect, deleting each once the broker acknowledged it; the HealthPoller
 * and the StateReport keep the cloud's view of the printers fresh; Housekeeping forgets old jobs.
 */
export class HubAgent {
  readonly #o: AgentOptions
  readonly #t: AgentTimings
  readonly #events = new HubEvents()
  readonly #spool: Spool
  readonly #registry: PrinterRegistry
  readonly #session: HubSession
  readonly #workers = new Map<string, PrinterWorker>()
  readonly #cloud: HubCloud
  readonly #renderer: RenderPool
  readonly #jobs: JobRequests
  readonly #state: StateReport
  readonly #outbox: OutboxPump
  readonly #poller: HealthPoller
  readonly #housekeeping: Housekeeping
  readonly #lan: LanServer

  constructor(options: AgentOptions) {
    this.#o = options
    this.#t = { ...DEFAULT_TIMINGS, ...options.timings }
    const { identity, logger } = options
    const events = this.#events
    this.#spool = new Spool(path.join(options.dataDir, 'spool.sqlite'))
    this.#cloud = options.cloud ?? new CloudClient(identity.cloud_url, identity.credential)
    this.#renderer = new RenderPool(options.renderWorkers ?? DEFAULT_RENDER_WORKERS, {
      logger: logger.child({ name: 'render' }),
    })
    this.#registry = new PrinterRegistry(options.printers, {
      createTransport: options.createTransport,
      describe: options.describe,
      statusTimeoutMs: this.#t.statusTimeoutMs,
      onChange: () => events.emit('stateDue'),
      logger,
    })
    this.#jobs = new JobRequests({
      spool: this.#spool,
      worker: (key) => this.#workers.get(key),
      logger,
    })
    const handlers: SessionHandlers = {
      onConnected: () => events.emit('connected'),
      onOffer: (offer) => this.#jobs.offer(offer),
      onCommand: (command) => this.#command(command),
    }
    this.#session = options.openSession?.(handlers) ?? this.#mqttSession(handlers)
    const session = this.#session
    // Told first of a connect, before anything answers it.
    events.on('connected', () => options.updates?.connected())
    this.#state = new StateReport({
      session,
      registry: this.#registry,
      events,
      agentVersion: AGENT_VERSION,
      updates: options.updates,
      lan: () => this.#lan.endpoint,
      logger,
    })
    this.#outbox = new OutboxPump({ spool: this.#spool, session, events, logger })
    this.#poller = new HealthPoller({
      registry: this.#registry,
      events,
      busy: (key) => this.#workers.get(key)?.busy ?? false,
      intervalMs: this.#t.healthIntervalMs,
    })
    this.#lan = new LanServer({
      ...options.lan,
      identity,
      dataDir: options.dataDir,
      documentsDir: this.#documentsDir,
      spool: this.#spool,
      registry: this.#registry,
      events,
      fetchCredentials: () => this.#cloud.lanCredentials(),
      wake: (key) => this.#workers.get(key)?.wake(),
      logger: logger.child({ name: 'lan' }),
    })
    this.#housekeeping = new Housekeeping({
      spool: this.#spool,
      documentsDir: this.#documentsDir,
      intervalMs: HOUSEKEEPING_MS,
      keepFinishedMs: KEEP_FINISHED_MS,
      logger,
    })
  }

  /** The cloud named this broker (hub/cli.ts looks it up again when the hub started with the one it kept). */
  useBroker(mqttUrl: string): void {
    this.#session.useBroker?.(mqttUrl)
  }

  /** Sends the state again (the update's progress changed). */
  stateChanged(): void {
    this.#events.emit('stateDue')
  }

  start(): void {
    const { logger } = this.#o
    if (this.#spool.version.newer)
      logger.info(
        { spool_version: this.#spool.version.now },
        'the spool was written by a newer release; this one reads it as it is',
      )
    for (const printJobId of this.#spool.recoverInterrupted()) {
      logger.warn(
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
    for (const key of this.#registry.keys()) this.#workers.set(key, this.#worker(key))
    this.#state.start()
    this.#outbox.start()
    this.#session.start()
    for (const key of this.#spool.printerKeysWithWork()) this.#workers.get(key)?.wake()
    this.#poller.start()
    this.#housekeeping.start()
    void this.#lan.start()
  }

  async stop(): Promise<void> {
    await this.#lan.stop()
    this.#poller.stop()
    this.#housekeeping.stop()
    await Promise.all([...this.#workers.values()].map((w) => w.stop()))
    await this.#renderer.stop()
    this.#state.stop()
    await this.#outbox.stop()
    await this.#session.stop()
    this.#spool.close()
  }

  get #documentsDir(): string {
    return path.join(this.#o.dataDir, 'documents')
  }

  #mqttSession(handlers: SessionHandlers): MqttSession {
    const { identity, logger } = this.#o
    return new MqttSession({
      ...handlers,
      mqttUrl: this.#o.mqttUrl,
      agentId: identity.agent_id,
      credential: identity.credential,
      keepaliveSeconds: this.#o.keepaliveSeconds,
      logger: logger.child({ name: 'mqtt' }),
      lookUpBroker: async () => (await this.#cloud.connection()).mqtt_url,
      presenceConfirmMs: this.#t.presenceConfirmMs,
    })
  }

  #worker(key: string): PrinterWorker {
    return new PrinterWorker(key, {
      spool: this.#spool,
      registry: this.#registry,
      download: (url, sha, size) => this.#cloud.download(url, sha, size, this.#documentsDir),
      keepOffered: (document) => keepOfferedDocument(this.#documentsDir, document),
      logger: this.#o.logger.child({ printer: key }),
      paperWaitTimeoutMs: this.#t.paperWaitTimeoutMs,
      unreachableTimeoutMs: this.#t.unreachableTimeoutMs,
      recheckMs: this.#t.recheckMs,
      statusTimeoutMs: this.#t.statusTimeoutMs,
      renderer: this.#renderer,
      renderDeadlineMs: this.#t.renderDeadlineMs,
    })
  }

  #command(command: AgentCommand): void {
    if (command.command === 'refresh_state') this.#events.emit('stateDue')
    else if (command.command === 'run_release') this.#o.updates?.runRelease(command.version)
    else if (command.command === 'refresh_lan') this.#events.emit('lanDue')
    else this.#jobs.cancel(command)
  }
}
