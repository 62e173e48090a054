import type { HubEvents } from '../hub-events.ts'
import type { PrinterRegistry } from './registry.ts'

export interface HealthPollerOptions {
  registry: PrinterRegistry
  events: HubEvents
  /** Whether a printer is printing (its worker reports its health before each job). */
  busy(printerKey: string): boolean
  intervalMs: number
}

/**
 * Idle printers are asked for their health now and then; busy ones report it before each job. Each round
 * ends with a state report even when nothing changed, so the cloud's `last_seen_at` and each printer's
 * `health.checked_at` stay fresh and a live hub can be told from a dead one.
 */
export class HealthPoller {
  readonly #o: HealthPollerOptions
  #timer: NodeJS.Timeout | undefined
  #stopped = false

  constructor(options: HealthPollerOptions) {
    this.#o = options
  }

  /** The first round starts at once. */
  start(): void {
    this.#stopped = false
    this.#timer = setTimeout(() => void this.#round(), 0)
  }

  stop(): void {
    this.#stopped = true
    clearTimeout(this.#timer)
  }

  async #round(): Promise<void> {
    const { registry, events, busy, intervalMs } = this.#o
    for (const key of registry.keys()) {
      if (!this.#stopped && !busy(key)) await registry.refresh(key).catch(() => {})
    }
    if (this.#stopped) return
    events.emit('stateDue')
    this.#timer = setTimeout(() => void this.#round(), intervalMs)
  }
}
