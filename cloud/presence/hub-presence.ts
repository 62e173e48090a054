import type { Logger } from 'pino'
import { type HubPayload, PROTOCOL_VERSION } from '../../protocol/hub-messages.ts'
import { HandlerRetry } from '../broker/handler-retry.ts'
import type { HubBus } from '../broker/hub-bus.ts'
import type { Storage } from '../storage/storage.ts'
import { WILL_RECHECK_MS, WillRecheck } from './will-recheck.ts'

export interface HubPresenceOptions {
  storage: Pick<Storage, 'hubPresence'>
  bus: HubBus
  logger: Logger
  /**
   * The queue every hub message is handled through, shared with the dispatcher, so that one bound holds for
   * all of them and they are taken in arrival order; one of its own by default.
   */
  handlers?: HandlerRetry
  /**
   * How long after a last will took a hub offline the hub is asked who is here (`announce`) if it is still
   * offline then (default WILL_RECHECK_MS; the cloud passes its WILL_RECHECK_MS setting); tests shorten it.
   */
  willRecheckMs?: number
  /**
   * Told once a hub's connection is recorded online, within the handling of its presence (so that a failure
   * has the presence handled again): the dispatcher offers the hub its unfinished jobs.
   */
  hubOnline?(agentId: string): Promise<void>
}

/**
 * Whether each hub is online, from its `presence` messages: `online` when it connects, `offline` as its last
 * will (or its goodbye). Only the session that brought a hub online takes it offline, and a connection whose
 * end was handled first never brings it online (storage/hub-presence.ts), since several nodes may handle a
 * hub's messages in either order. A hub that asks (`confirm`) is told once its presence is recorded; a hub a
 * will took offline is asked who is here a while later if it is still offline (will-recheck.ts).
 */
export class HubPresence {
  readonly #o: HubPresenceOptions
  readonly #handlers: HandlerRetry
  readonly #wills: WillRecheck

  constructor(options: HubPresenceOptions) {
    this.#o = options
    this.#handlers = options.handlers ?? new HandlerRetry(options.logger)
    this.#wills = new WillRecheck({
      hubPresence: options.storage.hubPresence,
      logger: options.logger,
      recheckMs: options.willRecheckMs ?? WILL_RECHECK_MS,
      announce: (agentId) => this.#command(agentId, { v: PROTOCOL_VERSION, command: 'announce' }),
    })
  }

  async start(): Promise<void> {
    // Only a hub's latest presence counts, so a retry yields to a newer one.
    await this.#o.bus.subscribe('presence', (agentId, p) =>
      this.#handlers.run('presence', agentId, `${agentId}/presence`, p, () => this.#presence(agentId, p)),
    )
    this.#wills.start()
  }

  /** Resolves once every presence received so far has been handled (or failed and awaits its retry). */
  handled(): Promise<void> {
    return this.#handlers.settled()
  }

  /** Stops handling presence and asking hubs who is here; resolves once what is under way has ended. */
  async stop(): Promise<void> {
    await Promise.all([this.#wills.stop(), this.#handlers.stop()])
  }

  async #presence(agentId: string, presence: HubPayload<'presence'>): Promise<void> {
    const { storage, logger } = this.#o
    const at = new Date().toISOString()
    if (!presence.online) {
      if (await storage.hubPresence.markOffline(agentId, presence.session, at)) {
        await storage.hubPresence.printersLastSeen(agentId, at)
        logger.info({ agent_id: agentId }, 'hub offline')
        this.#wills.ended(agentId)
      }
      return
    }
    // A revoked hub (or an id no hub has) is not marked online, nor offered anything.
    if (!(await storage.hubPresence.markOnline(agentId, presence.session, at))) return
    // Recorded: a hub that asked is told so, and stops announcing itself (protocol: `presence_recorded`).
    if (presence.confirm)
      await this.#command(agentId, {
        v: PROTOCOL_VERSION,
        command: 'presence_recorded',
        session: presence.session,
      })
    await this.#o.hubOnline?.(agentId)
  }

  async #command(agentId: string, command: HubPayload<'command'>): Promise<void> {
    try {
      await this.#o.bus.publish(agentId, 'command', command)
    } catch (error) {
      // A hub that is not told its presence was recorded announces itself again.
      this.#o.logger.warn({ err: error, agent_id: agentId, topic: 'command' }, 'publish to hub failed')
    }
  }
}
