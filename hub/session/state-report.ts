import { arch, hostname, platform } from 'node:os'
import type { Logger } from 'pino'
import type { HubLanEndpoint, HubUpdate } from '../../protocol/hub-messages.ts'
import { PROTOCOL_VERSION } from '../../protocol/hub-messages.ts'
import type { HubEvents } from '../hub-events.ts'
import type { PrinterRegistry } from '../printers/registry.ts'
import type { HubSession } from './hub-session.ts'

/** What the state report says of the self-update (hub/update/hub-updater.ts). */
export interface UpdateReport {
  /** Whether this hub can update itself (it runs from an installed release). */
  readonly updatable: boolean
  report(): HubUpdate | undefined
}

export interface StateReportOptions {
  session: HubSession
  registry: PrinterRegistry
  events: HubEvents
  agentVersion: string
  updates?: UpdateReport
  /** Where the hub serves the print API on its LAN, while it does (hub/lan/lan-server.ts). */
  lan?(): HubLanEndpoint | undefined
  logger: Logger
}

/**
 * Sends the hub's state (its printers with their health, its release and update) after every connect and
 * whenever it is due. Not through the outbox: only the latest state matters, and it goes again with the next
 * health round.
 */
export class StateReport {
  readonly #o: StateReportOptions
  readonly #send = () => this.#publish()

  constructor(options: StateReportOptions) {
    this.#o = options
  }

  start(): void {
    this.#o.events.on('connected', this.#send)
    this.#o.events.on('stateDue', this.#send)
  }

  stop(): void {
    this.#o.events.off('connected', this.#send)
    this.#o.events.off('stateDue', this.#send)
  }

  #publish(): void {
    const { session, registry, updates, agentVersion, logger } = this.#o
    if (!session.connected) return
    const update = updates?.report()
    const lan = this.#o.lan?.()
    session
      .publish('state', {
        v: PROTOCOL_VERSION,
        agent_version: agentVersion,
        host: { hostname: hostname(), platform: platform(), arch: arch() },
        printers: registry.report(),
        ...(update && { update }),
        ...(updates?.updatable && { updatable: true }),
        ...(lan && { lan }),
      })
      .catch((error: unknown) => logger.debug({ err: error }, 'state not sent'))
  }
}
