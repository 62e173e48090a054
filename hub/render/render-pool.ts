import type { Logger } from 'pino'
import type { GreyPage } from './grey-page.ts'
import { type RenderOptions, RenderWorker } from './render-worker.ts'

interface Member {
  worker: RenderWorker
  /** Renders and conversions given to it and not finished (running or waiting their turn). */
  inFlight: number
}

/**
 * A few render workers shared by every printer of a hub, so that one printer's long render (up to its
 * deadline) does not hold another printer's PDF: each render goes to the worker with the least work. Each
 * worker's process starts with its first render, so a hub that prints RAW only runs no Ghostscript.
 */
export class RenderPool {
  readonly #members: Member[]

  constructor(size: number, options: { logger?: Logger } = {}) {
    if (!Number.isInteger(size) || size < 1)
      throw new RangeError(`a render pool has at least 1 worker, not ${size}`)
    this.#members = Array.from({ length: size }, (_, i) => ({
      worker: new RenderWorker({ logger: options.logger?.child({ render_worker: i + 1 }) }),
      inFlight: 0,
    }))
  }

  /** The worker processes running now. */
  get pids(): number[] {
    return this.#members.map((m) => m.worker.pid).filter((pid) => pid !== undefined)
  }

  /** Like RenderWorker.render; the worker is chosen when the iteration starts. */
  render(pdfPath: string, options: RenderOptions): AsyncIterable<GreyPage> {
    const take = () => this.#take()
    return (async function* () {
      const member = take()
      try {
        yield* member.worker.render(pdfPath, options)
      } finally {
        member.inFlight--
      }
    })()
  }

  async convert(pdfPath: string, args: string[], deadlineMs: number): Promise<void> {
    const member = this.#take()
    try {
      await member.worker.convert(pdfPath, args, deadlineMs)
    } finally {
      member.inFlight--
    }
  }

  async stop(): Promise<void> {
    await Promise.all(this.#members.map((m) => m.worker.stop()))
  }

  /** The member with the least work (the first of equals), counted busy from now. */
  #take(): Member {
    let best = this.#members[0]!
    for (const member of this.#members) if (member.inFlight < best.inFlight) best = member
    best.inFlight++
    return best
  }
}
