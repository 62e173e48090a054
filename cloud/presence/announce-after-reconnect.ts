import type { Logger } from 'pino'
import { PROTOCOL_VERSION } from '../../protocol/hub-messages.ts'
import type { HubBus } from '../broker/hub-bus.ts'
import type { HubPresenceRepository } from '../storage/hub-presence.ts'

/** How long after subscribing again a node waits before asking the hubs it has not heard from to announce. */
export const ANNOUNCE_DELAY_MS = 5_000

export interface AnnounceAfterReconnectOptions {
  hubPresence: Pick<HubPresenceRepository, 'unrevokedIds'>
  bus: HubBus
  logger: Logger
  /**
   * Resolves once the hub messages this node already received have been handled: in a reconnect storm they
   * wait in its queue, and a hub asked before its presence is recorded would send it all again.
   */
  handled(): Promise<void>
}

/**
 * With an external broker (MQTT_URL), what hubs publish after a Mosquitto restart (or while this node was the
 * only one, and away) and before a node has subscribed again reaches no one: their presence above all, and the
 * last wills of their old connections, handled meanwhile, took them offline. So after every reconnect (not the
 * first connection, which trusts the database) the node asks each hub that is not revoked and that is offline
 * or not heard from since it subscribed again to announce itself (protocol: `announce`). Job reports lost so
 * are asked again by silent-jobs.ts.
 */
export class AnnounceAfterReconnect {
  readonly #o: AnnounceAfterReconnectOptions
  #timer: NodeJS.Timeout | undefined
  #stopped = false

  constructor(options: AnnounceAfterReconnectOptions) {
    this.#o = options
  }

  /**
   * The node subscribed again after a reconnect. Not asked at once: after a broker restart most hubs come
   * back by themselves, and a hub the cloud has heard from since this node subscribed again needs no asking
   * (with thousands of hubs, asking them all doubled the messages of the reconnect storm).
   */
  resubscribed(subscribedAt: Date): void {
    if (this.#stopped) return
    clearTimeout(this.#timer)
    this.#timer = setTimeout(() => {
      this.#ask(subscribedAt).catch((error: unknown) =>
        this.#o.logger.error({ err: error }, 'asking hubs to announce themselves failed'),
      )
    }, ANNOUNCE_DELAY_MS)
  }

  /** Asks no more hubs (the node leaves or stops). */
  stop(): void {
    this.#stopped = true
    clearTimeout(this.#timer)
  }

  async #ask(subscribedAt: Date): Promise<void> {
    await this.#o.handled()
    const ids = await this.#o.hubPresence.unrevokedIds(subscribedAt.toISOString())
    let asked = 0
    for (const agentId of ids) {
      if (this.#stopped) break
      // Away from the broker the bus fails fast: nothing is sent, and the next reconnect asks again.
      await this.#o.bus
        .publish(agentId, 'command', { v: PROTOCOL_VERSION, command: 'announce' })
        .then(() => asked++)
        .catch(() => {})
    }
    this.#o.logger.info({ hubs: asked }, 'hubs asked to announce themselves after a reconnect')
  }
}
