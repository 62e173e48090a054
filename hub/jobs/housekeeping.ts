import { readdir, rm } from 'node:fs/promises'
import path from 'node:path'
import type { Logger } from 'pino'
import type { Spool } from './spool.ts'

export interface HousekeepingOptions {
  spool: Spool
  /** Where downloaded documents are kept. */
  documentsDir: string
  /** How often it runs (it runs at start too). */
  intervalMs: number
  /** Finished jobs are forgotten this long after they finished. */
  keepFinishedMs: number
  logger: Logger
}

/** Forgets jobs finished long ago and deletes downloaded documents no unfinished job needs. */
export class Housekeeping {
  readonly #o: HousekeepingOptions
  #timer: NodeJS.Timeout | undefined
  #stopped = false

  constructor(options: HousekeepingOptions) {
    this.#o = options
  }

  start(): void {
    this.#stopped = false
    void this.#tidy()
    this.#timer = setInterval(() => void this.#tidy(), this.#o.intervalMs)
    this.#timer.unref()
  }

  stop(): void {
    this.#stopped = true
    clearInterval(this.#timer)
  }

  async #tidy(): Promise<void> {
    const { spool, documentsDir, keepFinishedMs, logger } = this.#o
    try {
      spool.prune(new Date(Date.now() - keepFinishedMs))
      // Listed before asking what is in use: a job is in the spool before its download begins, so a document
      // downloaded meanwhile is either not listed or in use.
      const files = await readdir(documentsDir).catch(() => [] as string[])
      if (this.#stopped) return
      const inUse = spool.documentsInUse()
      for (const file of files) {
        if (!inUse.has(file) && !file.endsWith('.part'))
          await rm(path.join(documentsDir, file), { force: true })
      }
    } catch (error) {
      if (!this.#stopped) logger.warn({ err: error }, 'housekeeping failed')
    }
  }
}
