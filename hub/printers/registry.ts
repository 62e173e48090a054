import type { Logger } from 'pino'
import type { HubPrinter } from '../../protocol/hub-messages.ts'
import type { PrinterHealth } from '../../protocol/printer-health.ts'
import { probeHealth } from '../languages/read-health.ts'
import type { Transport } from '../transports/transport.ts'
import type { PrinterSpec, TransportSpec } from './printer-spec.ts'

export interface RegistryDeps {
  createTransport(spec: TransportSpec): Transport
  /** Shown to the cloud as the printer's `uri`. */
  describe(spec: PrinterSpec): string
  statusTimeoutMs: number
  /** Told whenever a printer's health state or reasons change. */
  onChange(): void
  /** A printer that cannot be reached is logged when it goes and when it comes back, not on every check. */
  logger: Logger
}

interface Entry {
  spec: PrinterSpec
  health: PrinterHealth
}

const NOT_CHECKED = (): PrinterHealth => ({
  state: 'unknown',
  reasons: ['not_checked_yet'],
  checked_at: new Date().toISOString(),
})

/** The printers this hub drives, with their last known health. */
export class PrinterRegistry {
  readonly #entries = new Map<string, Entry>()
  readonly #deps: RegistryDeps

  constructor(specs: PrinterSpec[], deps: RegistryDeps) {
    this.#deps = deps
    for (const spec of specs) this.#entries.set(spec.key, { spec, health: NOT_CHECKED() })
  }

  keys(): string[] {
    return [...this.#entries.keys()]
  }

  spec(key: string): PrinterSpec | undefined {
    return this.#entries.get(key)?.spec
  }

  health(key: string): PrinterHealth | undefined {
    return this.#entries.get(key)?.health
  }

  transportFor(key: string): Transport {
    const entry = this.#entries.get(key)
    if (!entry) throw new Error(`no printer ${key}`)
    return this.#deps.createTransport(entry.spec.transport)
  }

  /** Asks the printer for its status over a connection of its own, and records the answer. */
  async refresh(key: string): Promise<PrinterHealth> {
    const entry = this.#entries.get(key)
    if (!entry) throw new Error(`no printer ${key}`)
    const health = await probeHealth(this.#deps.createTransport(entry.spec.transport), entry.spec.language, {
      timeoutMs: this.#deps.statusTimeoutMs,
    })
    this.record(key, health)
    return health
  }

  record(key: string, health: PrinterHealth): void {
    const entry = this.#entries.get(key)
    if (!entry) return
    const changed =
      entry.health.state !== health.state || entry.health.reasons.join() !== health.reasons.join()
    const wasReachable = entry.health.state !== 'offline'
    const reachable = health.state !== 'offline'
    const printer = { printer: key, printer_name: entry.spec.name }
    if (wasReachable && !reachable)
      this.#deps.logger.warn({ ...printer, reasons: health.reasons }, 'printer unreachable')
    else if (!wasReachable && reachable)
      this.#deps.logger.info({ ...printer, state: health.state }, 'printer reachable again')
    entry.health = health
    if (changed) this.#deps.onChange()
  }

  /** The printers as the hub reports them in its state message. */
  report(): HubPrinter[] {
    return [...this.#entries.values()].map(({ spec, health }) => ({
      key: spec.key,
      name: spec.name,
      uri: this.#deps.describe(spec),
      languages: [spec.language],
      capabilities: spec.capabilities,
      health,
    }))
  }
}
