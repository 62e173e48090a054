import type { HubPayload } from '../../protocol/hub-messages.ts'
import type { HandlerRetry } from '../broker/handler-retry.ts'
import type { HubBus } from '../broker/hub-bus.ts'
import type { HubReleaseRecord } from '../storage/release-pins.ts'
import type { Storage } from '../storage/storage.ts'

export interface HubStateReportsOptions {
  storage: Pick<Storage, 'agents' | 'printers'>
  bus: HubBus
  /** The queue every hub message is handled through (hub-presence.ts). */
  handlers: HandlerRetry
  /** Told of each hub state report after it is applied, with the hub as stored (cloud/releases/release-rollout.ts). */
  onState?(agentId: string, state: HubPayload<'state'>, stored: HubReleaseRecord): Promise<void>
}

/**
 * A hub's state report, sent on each connect and after each health round: the version it runs, where it
 * serves its LAN API, and the printers it has. A printer is online while its hub's latest report names it and its hub is online
 * (hub-presence.ts), each written on its own, since several nodes may handle the two in either order.
 */
export class HubStateReports {
  readonly #o: HubStateReportsOptions

  constructor(options: HubStateReportsOptions) {
    this.#o = options
  }

  async start(): Promise<void> {
    // Only a hub's latest state counts, so a retry yields to a newer one.
    await this.#o.bus.subscribe('state', (agentId, s) =>
      this.#o.handlers.run('state', agentId, `${agentId}/state`, s, () => this.#state(agentId, s)),
    )
  }

  async #state(agentId: string, state: HubPayload<'state'>): Promise<void> {
    const { storage } = this.#o
    const at = new Date().toISOString()
    const report = { version: state.agent_version, lan: state.lan ?? null }
    const agent = await storage.agents.recordState(agentId, report, at)
    if (!agent) return
    await storage.printers.syncFromHub(agent.account_id, agentId, state.printers, at)
    await this.#o.onState?.(agentId, state, agent)
  }
}
