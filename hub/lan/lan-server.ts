import { X509Certificate } from 'node:crypto'
import { hostname, networkInterfaces } from 'node:os'
import type { FastifyInstance } from 'fastify'
import type { Logger } from 'pino'
import { createPdfInspector, type PdfInspector } from '../../print-api/documents/pdf-inspection.ts'
import type { HubLanEndpoint } from '../../protocol/hub-messages.ts'
import { printerIdFor } from '../../protocol/printer-id.ts'
import type { HubIdentity } from '../cloud/identity.ts'
import type { HubEvents } from '../hub-events.ts'
import type { Spool } from '../jobs/spool.ts'
import type { PrinterRegistry } from '../printers/registry.ts'
import { DnsSdAdvertiser } from './dns-sd.ts'
import { buildLanApi } from './lan-api.ts'
import { loadOrCreateLanCertificate } from './lan-certificate.ts'
import { LanCredentials } from './lan-credentials.ts'
import { LanJobs, type LanPrinter } from './lan-jobs.ts'
import { PRINT_HUB_SERVICE_TYPE, printHubTxt } from './print-hub-service.ts'

/** The LAN API's HTTPS port unless HUB_LAN_PORT says otherwise. */
export const DEFAULT_LAN_PORT = 8443
/** How often the hub fetches its LAN credentials while it reaches the cloud (and at each connect and refresh_lan). */
const REFRESH_MS = 60_000
/** The documents a LAN job takes: the cloud's default limit (MAX_DOCUMENT_BYTES). */
const MAX_DOCUMENT_BYTES = 50 * 1024 * 1024
/** A LAN job not started an hour after it was taken fails `expired` (the cloud's PENDING_JOB_EXPIRY_SECONDS). */
const LAN_JOB_EXPIRY_SECONDS = 3600

export interface LanServerOptions {
  identity: HubIdentity
  dataDir: string
  documentsDir: string
  spool: Spool
  registry: PrinterRegistry
  events: HubEvents
  /** GETs /agent-api/v1/lan-credentials (CloudClient.lanCredentials). */
  fetchCredentials(): Promise<unknown>
  /** Wakes the worker of a printer whose queue gained a job. */
  wake(printerKey: string): void
  logger: Logger
  port?: number
  /** Where the server listens: every interface by default (tests: 127.0.0.1). */
  host?: string
  /** The hub's LAN addresses, for the certificate and the cloud; the non-internal ones by default. */
  addresses?(): string[]
  /** Advertise the API with DNS-SD (Avahi); true by default. */
  advertise?: boolean
  refreshMs?: number
}

/**
 * The print API on the hub's LAN (docs/lan-printing.md), while it is enabled for the hub. The cloud says
 * whether it is, and with what to check credentials, in the lan-credentials document: fetched at each connect,
 * when the cloud sends `refresh_lan`, and every minute while connected, and kept on disk, so that the API goes
 * on serving across an outage and a reboot. While it serves, the hub advertises it with DNS-SD and reports
 * where it is and its certificate's digests in its state (`lan`), which the cloud publishes to the account.
 */
export class LanServer {
  readonly #o: LanServerOptions
  readonly #credentials: LanCredentials
  readonly #refreshNow = () => void this.refresh()
  #timer: NodeJS.Timeout | undefined
  #app: FastifyInstance | undefined
  #inspector: PdfInspector | undefined
  #advertiser: DnsSdAdvertiser | undefined
  #endpoint: HubLanEndpoint | undefined
  /** The reconcile under way: opening or closing the server, one at a time. */
  #settling: Promise<void> = Promise.resolve()
  #stopped = false

  constructor(options: LanServerOptions) {
    this.#o = options
    this.#credentials = new LanCredentials({
      dataDir: options.dataDir,
      agentId: options.identity.agent_id,
      accountId: options.identity.account_id,
    })
  }

  /** Where the API is served now, for the state report; undefined while it is not. */
  get endpoint(): HubLanEndpoint | undefined {
    return this.#endpoint
  }

  async start(): Promise<void> {
    this.#o.events.on('connected', this.#refreshNow)
    this.#o.events.on('lanDue', this.#refreshNow)
    this.#timer = setInterval(this.#refreshNow, this.#o.refreshMs ?? REFRESH_MS)
    this.#timer.unref()
    // What was kept from the last fetch: the API serves through an outage that began before this start.
    await this.#settle()
  }

  async stop(): Promise<void> {
    this.#stopped = true
    clearInterval(this.#timer)
    this.#o.events.off('connected', this.#refreshNow)
    this.#o.events.off('lanDue', this.#refreshNow)
    await this.#settling
    await this.#close()
  }

  /** Fetches the document, then opens or closes the API as it says. A failed fetch keeps the last one. */
  async refresh(): Promise<void> {
    try {
      await this.#credentials.refresh(() => this.#o.fetchCredentials())
    } catch (error) {
      this.#o.logger.debug({ err: error }, 'LAN credentials not fetched; the last ones stay')
      return
    }
    await this.#settle()
  }

  #settle(): Promise<void> {
    this.#settling = this.#settling.then(async () => {
      if (this.#stopped) return
      const enabled = this.#credentials.document?.lan_api_enabled === true
      if (enabled && !this.#app) await this.#open()
      else if (!enabled && this.#app) await this.#close()
    })
    return this.#settling.catch((error: unknown) => {
      this.#o.logger.error({ err: error }, 'the LAN print API could not be opened')
    })
  }

  async #open(): Promise<void> {
    const { identity, logger } = this.#o
    const { host } = this.#o
    // Listening on one address, the API is reached there only.
    const addresses =
      host !== undefined && host !== '0.0.0.0' && host !== '::'
        ? [host]
        : (this.#o.addresses?.() ?? lanAddresses())
    // A host name that is no DNS label (RFC 1123 §2.1) is left out: Avahi publishes it under another.
    const label = hostname().toLowerCase()
    const certificate = await loadOrCreateLanCertificate({
      dir: this.#o.dataDir,
      hubId: identity.agent_id,
      hostnames: /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/.test(label) ? [`${label}.local`] : [],
      addresses: addresses.length > 0 ? addresses : ['127.0.0.1'],
    })
    const inspector = createPdfInspector({
      timeoutMs: 30_000,
      maxConcurrent: 1,
      maxQueued: 8,
      maxQueuedPerAccount: 8,
    })
    const app = await buildLanApi({
      jobs: new LanJobs({
        spool: this.#o.spool,
        documentsDir: this.#o.documentsDir,
        printers: () => this.#printers(),
        pdfInspector: inspector,
        maxDocumentBytes: MAX_DOCUMENT_BYTES,
        expirySeconds: LAN_JOB_EXPIRY_SECONDS,
        wake: this.#o.wake,
      }),
      credentials: this.#credentials,
      maxDocumentBytes: MAX_DOCUMENT_BYTES,
      logger: logger.child({ name: 'lan-api' }),
      https: { key: certificate.key, cert: certificate.cert },
    })
    await app.listen({ host: this.#o.host ?? '0.0.0.0', port: this.#o.port ?? DEFAULT_LAN_PORT })
    const address = app.server.address()
    const port = typeof address === 'object' && address ? address.port : (this.#o.port ?? DEFAULT_LAN_PORT)
    this.#app = app
    this.#inspector = inspector
    this.#endpoint = {
      port,
      addresses: addresses.slice(0, 16),
      cert_sha256: certificate.sha256,
      spki_sha256: certificate.spkiSha256,
    }
    if (this.#o.advertise !== false) {
      this.#advertiser = new DnsSdAdvertiser({
        name: identity.name,
        type: PRINT_HUB_SERVICE_TYPE,
        port,
        txt: printHubTxt({
          hubId: identity.agent_id,
          accountId: identity.account_id,
          certificateDer: new X509Certificate(certificate.cert).raw,
        }),
        logger,
      })
      await this.#advertiser.start()
    }
    logger.info({ port, addresses }, 'LAN print API serving')
    this.#o.events.emit('stateDue')
  }

  async #close(): Promise<void> {
    if (!this.#app) return
    await this.#advertiser?.stop()
    await this.#app.close()
    this.#inspector?.close()
    this.#app = this.#inspector = this.#advertiser = this.#endpoint = undefined
    this.#o.logger.info('LAN print API closed')
    this.#o.events.emit('stateDue')
  }

  /** The hub's printers as the cloud last showed them, with their health as the hub knows it now. */
  #printers(): LanPrinter[] {
    const { registry, identity } = this.#o
    const byId = new Map(registry.keys().map((key) => [printerIdFor(identity.agent_id, key), key]))
    return (this.#credentials.document?.printers ?? []).flatMap((printer) => {
      const key = byId.get(printer.printer_id)
      if (key === undefined) return []
      return [{ ...printer, printer_key: key, health: registry.health(key) ?? printer.health }]
    })
  }
}

/** The host's addresses on its networks (not loopback), IPv4 first. */
function lanAddresses(): string[] {
  const all = Object.values(networkInterfaces()).flatMap((list) => list ?? [])
  const external = all.filter((address) => !address.internal && !address.address.startsWith('fe80:'))
  return [
    ...external.filter((a) => a.family === 'IPv4').map((a) => a.address),
    ...external.filter((a) => a.family === 'IPv6').map((a) => a.address),
  ]
}
