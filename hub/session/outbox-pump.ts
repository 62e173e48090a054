import type { Logger } from 'pino'
import type { HubEvents } from '../hub-events.ts'
import type { Spool } from '../jobs/spool.ts'
import type { HubSession } from './hub-session.ts'

export interface OutboxPumpOptions {
  spool: Spool
  session: HubSession
  events: HubEvents
  logger: Logger
}

/**
 * Sends the spool's outbox to the cloud, in order, each message deleted once the broker acknowledged it:
 * whenever the outbox gains messages and after every (re)connect. A message that could not be sent stays in
 * the outbox and goes after the next connect.
 */
export class OutboxPump {
  readonly #o: OutboxPumpOptions
  readonly #send = () => void this.#pass()
  #unsubscribe: (() => void) | undefined
  #passing: Promise<void> = Promise.resolve()
  #running = false
  /** Something asked for a pass since the outbox was last read: a pass under way goes round again. */
  #again = false
  #stopped = false

  constructor(options: OutboxPumpOptions) {
    this.#o = options
  }

  start(): void {
    this.#stopped = false
    this.#unsubscribe = this.#o.spool.onOutbox(this.#send)
    this.#o.events.on('connected', this.#send)
    this.#send()
  }

  /** Stops listening, after one last pass: what the hub wrote while it stopped still goes if it can. */
  async stop(): Promise<void> {
    this.#unsubscribe?.()
    this.#o.events.off('connected', this.#send)
    this.#stopped = true
    await this.#pass()
  }

  #pass(): Promise<void> {
    this.#again = true
    if (!this.#running) this.#passing = this.#sendAll()
    return this.#passing
  }

  /** Goes round while anything asked for a pass meanwhile (a change of the outbox, a reconnect). */
  async #sendAll(): Promise<void> {
    // Cleared in the same turn as the last look at `#again`, so that no call for a pass goes unseen.
    this.#running = true
    try {
      while (this.#again) await this.#sendOutbox()
    } catch (error) {
      // Whatever is left stays in the outbox and goes with the next pass.
      if (!this.#stopped) this.#o.logger.warn({ err: error }, 'outbox send failed')
    } finally {
      this.#running = false
    }
  }

  /** Sends until the outbox is empty, or until the session cannot take a message (sent after the next connect). */
  async #sendOutbox(): Promise<void> {
    const { spool, session } = this.#o
    for (;;) {
      // What is read now includes every change asked about until now.
      this.#again = false
      const messages = spool.outbox()
      if (messages.length === 0) return
      for (const message of messages) {
        if (!session.connected) return
        try {
          await session.publish(message.topic, message.payload)
        } catch {
          return
        }
        spool.delivered(message.seq)
      }
    }
  }
}
