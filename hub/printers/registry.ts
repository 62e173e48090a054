import type { Logger } from 'pino'
import type { HubPrinter } from '../../protocol/hub-messages.ts'
import type { PrinterCapabilities } from '../../protocol/printer.ts'
import type { PrinterHealth } from '../../protocol/printer-health.ts'
import {
  describeIppPrinter,
  IppError,
  type IppPrinterDescription,
  ippErrorHealth,
} from '../ipp/ipp-printer.ts'
import { probeHealth } from '../languages/read-health.ts'
import type { Transport } from '../transports/transport.ts'
import { type AnyPrinterSpec, type IppPrinterSpec, isIppPrinter } from './ipp-printer-uri.ts'
import type { TransportSpec } from './printer-spec.ts'

export interface RegistryDeps {
  createTransport(spec: TransportSpec): Transport
  /** Shown to the cloud as the printer's `uri`. */
  describe(spec: AnyPrinterSpec): string
  statusTimeoutMs: number
  /** Told whenever a printer's health state or reasons change. */
  onChange(): void
  /** A printer that cannot be reached is logged when it goes and when it comes back, not on every check. */
  logger: Logger
}

interface Entry {
  spec: AnyPrinterSpec
  health: PrinterHealth
  /** An IPP printer's own description, once it has answered (its capabilities replace the spec's). */
  ipp?: IppPrinterDescription
  /** Its last status request got no reply (many cheap network printers never answer one). */
  silent?: boolean
}

/** How long Get-Printer-Attributes may take: an office printer waking from sleep can be slow. */
export const IPP_QUERY_TIMEOUT_MS = 10_000

const NOT_CHECKED = (): PrinterHealth => ({
  state: 'unknown',
  reasons: ['not_checked_yet'],
  checked_at: new Date().toISOString(),
})

/**
 * The printers this hub drives, with their last known health. A raster printer is asked for its status in
 * its language over a connection of its own; an IPP printer is described by Get-Printer-Attributes, which
 * gives its health and what it can do.
 */
export class PrinterRegistry {
  readonly #entries = new Map<string, Entry>()
  readonly #deps: RegistryDeps

  constructor(specs: AnyPrinterSpec[], deps: RegistryDeps) {
    this.#deps = deps
    for (const spec of specs) this.#entries.set(spec.key, { spec, health: NOT_CHECKED() })
  }

  keys(): string[] {
    return [...this.#entries.keys()]
  }

  spec(key: string): AnyPrinterSpec | undefined {
    return this.#entries.get(key)?.spec
  }

  /** An IPP printer's description, from the last time it answered. */
  ippDescription(key: string): IppPrinterDescription | undefined {
    return this.#entries.get(key)?.ipp
  }

  health(key: string): PrinterHealth | undefined {
    return this.#entries.get(key)?.health
  }

  /**
   * Whether the printer answers status requests: false once one went unanswered, true again once one is
   * answered (the idle health rounds keep asking). A job need not wait a status timeout on a printer known
   * not to answer (issue 31: 2 s a job on such a printer).
   */
  answersStatus(key: string): boolean {
    return this.#entries.get(key)?.silent !== true
  }

  transportFor(key: string): Transport {
    const spec = this.#entries.get(key)?.spec
    if (!spec || isIppPrinter(spec)) throw new Error(`no raster printer ${key}`)
    return this.#deps.createTransport(spec.transport)
  }

  /** Asks the printer for its status (an IPP printer: for its description too), and records the answer. */
  async refresh(key: string): Promise<PrinterHealth> {
    const entry = this.#entries.get(key)
    if (!entry) throw new Error(`no printer ${key}`)
    const { spec } = entry
    const health = isIppPrinter(spec)
      ? await this.#describeIpp(entry, spec)
      : await probeHealth(this.#deps.createTransport(spec.transport), spec.language, {
          timeoutMs: this.#deps.statusTimeoutMs,
        })
    this.record(key, health)
    return health
  }

  async #describeIpp(entry: Entry, spec: IppPrinterSpec): Promise<PrinterHealth> {
    try {
      const description = await describeIppPrinter(spec.ipp.uri, {
        timeoutMs: IPP_QUERY_TIMEOUT_MS,
        ...(spec.ipp.ca && { tls: { ca: spec.ipp.ca } }),
      })
      const before = entry.ipp?.capabilities
      entry.ipp = description
      // New capabilities reach the cloud with the next state report, as a health change does.
      if (!before || !sameCapabilities(before, description.capabilities)) this.#deps.onChange()
      return description.health
    } catch (error) {
      if (error instanceof IppError) return ippErrorHealth(error)
      throw error
    }
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
    if (health.reasons.includes('no_status_reply')) entry.silent = true
    else if (reachable) entry.silent = false
    if (changed) this.#deps.onChange()
  }

  /** The printers as the hub reports them in its state message. */
  report(): HubPrinter[] {
    return [...this.#entries.values()].map(({ spec, health, ipp }) => ({
      key: spec.key,
      name: spec.name,
      uri: this.#deps.describe(spec),
      languages: isIppPrinter(spec) ? [] : [spec.language],
      capabilities: ipp?.capabilities ?? spec.capabilities,
      health,
    }))
  }
}

function sameCapabilities(a: PrinterCapabilities, b: PrinterCapabilities): boolean {
  return JSON.stringify(a) === JSON.stringify(b)
}
