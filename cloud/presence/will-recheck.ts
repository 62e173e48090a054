import type { Logger } from 'pino'
import type { HubPresenceRepository } from '../storage/hub-presence.ts'

/**
 * Long enough for a fleet reconnecting after a broker restart to be back online in the database (18.8 to 23.7 s
 * from the broker's stop at 19,500 hubs in the multi-node benchmark), so that hubs that are back are not
 * asked; short enough that a hub wrongly offline is back within a minute.
 */
export const WILL_RECHECK_MS = 20_000

export interface WillRecheckOptions {
  hubPresence: Pick<HubPresenceRepository, 'offlineAmong'>
  logger: Logger
  /** How long after a last will took a hub offline it is asked who is here, if it is still offline then. */
  recheckMs: number
  /** Asks the hub who is here (command `announce`); never throws. */
  announce(agentId: string): Promise<void>
}

/**
 * Several nodes share a hub's messages: a hub that reconnected at once may have had its new connection's
 * presence handled before its old connection's presence and will, which then took a connected hub offline.
 * Such a hub is asked who is here, if it is still offline a while after the will (a fleet reconnecting after
 * a broker restart is back by then, and is not asked); it answers with its presence and comes back online.
 * To a hub that is gone, the broker drops the ask.
 */
export class WillRecheck {
  readonly #o: WillRecheckOptions
  /** Hubs a last will took offline, and when (ms). */
  readonly #endedByWill = new Map<string, number>()
  readonly #passes = new Set<Promise<void>>()
  #timer: NodeJS.Timeout | undefined

  constructor(options: WillRecheckOptions) {
    this.#o = options
  }

  /** A last will took the hub offline now. */
  ended(agentId: string): void {
    this.#endedByWill.set(agentId, Date.now())
  }

  start(): void {
    const { recheckMs } = this.#o
    this.#timer = setInterval(() => {
      const pass = this.#askWhoIsHere(Date.now() - recheckMs)
      this.#passes.add(pass)
      void pass.then(() => this.#passes.delete(pass))
    }, recheckMs / 4)
    this.#timer.unref()
  }

  /** Resolves once the passes under way have ended. */
  async stop(): Promise<void> {
    clearInterval(this.#timer)
    await Promise.all(this.#passes)
  }

  async #askWhoIsHere(endedBefore: number): Promise<void> {
    const due: string[] = []
    for (const [agentId, at] of this.#endedByWill) {
      if (at > endedBefore) continue
      due.push(agentId)
      this.#endedByWill.delete(agentId)
    }
    if (due.length === 0) return
    try {
      for (const agentId of await this.#o.hubPresence.offlineAmong(due)) await this.#o.announce(agentId)
    } catch (error) {
      this.#o.logger.warn(
        { err: error, hubs: due.length },
        'could not ask hubs taken offline by a will who is here',
      )
    }
  }
}
