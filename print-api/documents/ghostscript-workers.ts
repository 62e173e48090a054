import { GhostscriptWorker } from './ghostscript-worker.ts'

/**
 * The inspector's warm Ghostscript processes. A process starts with the first inspection that finds none
 * idle, and goes on until it has taken `maxDocuments` documents, misses a deadline, crashes or is left dirty;
 * a process that had started is then replaced at once, so that the next PDF finds a warm one. A process idle
 * for `idleMs` ends (a hub that takes a LAN PDF now and then does not keep gs resident).
 */
export class GhostscriptWorkers {
  /** Idle workers, each with the timer that ends it. */
  readonly #idle = new Map<GhostscriptWorker, NodeJS.Timeout>()
  readonly #all = new Set<GhostscriptWorker>()
  #closed = false

  constructor(
    private readonly gsPath: string,
    private readonly maxDocuments: number,
    private readonly idleMs: number,
  ) {}

  /** The processes running now. */
  get pids(): number[] {
    return [...this.#all].map((worker) => worker.child.pid).filter((pid) => pid !== undefined)
  }

  /** An idle worker, or a new one; throws if none can be made (no temporary directory). */
  take(): GhostscriptWorker {
    for (const [worker, timer] of this.#idle) {
      clearTimeout(timer)
      this.#idle.delete(worker)
      if (worker.alive) return worker
    }
    return this.#spawn()
  }

  /** Takes back a worker after its document. */
  give(worker: GhostscriptWorker): void {
    if (this.#closed) {
      void worker.kill()
      return
    }
    if (worker.alive && !worker.dirty && worker.documents < this.maxDocuments) {
      this.#rest(worker)
      return
    }
    void worker.kill()
    if (worker.started) {
      try {
        this.#rest(this.#spawn())
      } catch {
        // The next inspection tries again.
      }
    }
  }

  /** Kills every process, idle or busy. */
  close(): void {
    this.#closed = true
    for (const timer of this.#idle.values()) clearTimeout(timer)
    this.#idle.clear()
    for (const worker of this.#all) void worker.kill()
  }

  #rest(worker: GhostscriptWorker): void {
    const timer = setTimeout(() => {
      this.#idle.delete(worker)
      void worker.kill()
    }, this.idleMs)
    timer.unref()
    this.#idle.set(worker, timer)
  }

  #spawn(): GhostscriptWorker {
    const worker = new GhostscriptWorker(this.gsPath)
    this.#all.add(worker)
    void worker.exited.then(() => this.#all.delete(worker))
    return worker
  }
}
