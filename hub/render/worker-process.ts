import { type ChildProcess, spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { createRequire } from 'node:module'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { ghostscriptEnvironment } from './ghostscript-policy.ts'
import { RenderError } from './render-error.ts'
import type { RenderCommand, WorkerReport } from './worker-messages.ts'

/**
 * The worker's command line. A packaged hub (ota/build.ts) is one bundled file with the worker's own bundle
 * next to it: run that with plain Node. From the source tree, run the worker module with tsx's loader, as the
 * hub itself is (`--import tsx`), by absolute URL so that it starts whatever the hub's working directory.
 */
function workerCommand(): string[] {
  const built = fileURLToPath(new URL('./render-worker-process.mjs', import.meta.url))
  if (existsSync(built)) return [built]
  const tsxLoader = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href
  return ['--import', tsxLoader, fileURLToPath(new URL('./render-worker-process.ts', import.meta.url))]
}
const WORKER_COMMAND = workerCommand()
/** Ghostscript's last words kept for an error message. */
const STDERR_TAIL = 2000

/** One render worker process, from spawn to exit. */
export class WorkerProcess {
  readonly child: ChildProcess
  /** Resolves when the worker takes commands; rejects with `worker_unavailable` if it never will. */
  readonly ready: Promise<void>
  /** Resolves once the process has ended and been reaped. */
  readonly exited: Promise<void>
  /** Called with each report about a render. */
  onReport: ((report: Exclude<WorkerReport, { type: 'ready' }>) => void) | undefined
  /** Called once when the process ends. */
  onExit: (() => void) | undefined
  /** Called once when the process ends, for the render under way. */
  onRunExit: (() => void) | undefined
  private stderr = ''
  private ended = false

  constructor() {
    this.child = spawn(process.execPath, WORKER_COMMAND, {
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
      // One malloc arena: libgs runs on libuv's threads, and per-thread arenas let the worker's peak memory
      // creep from 112 to 169 MB over a few dozen A4 documents; with one it stays at 105 MB, as fast
      // (test/bench/pdf-render.ts).
      env: { ...ghostscriptEnvironment(), MALLOC_ARENA_MAX: '1' },
    })
    // Ghostscript writes its messages to the process's own stdout and stderr (ghostscript4js returns only a
    // code): drain both so that the worker never blocks on a full pipe, and keep the end of stderr.
    this.child.stdout?.resume()
    this.child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
      this.stderr = (this.stderr + chunk).slice(-STDERR_TAIL)
    })
    this.exited = new Promise<void>((resolve) => {
      const end = () => {
        if (this.ended) return
        this.ended = true
        resolve()
        this.onRunExit?.()
        this.onExit?.()
      }
      this.child.once('exit', end)
      // A process that could not be spawned emits 'error' and perhaps no 'exit'.
      this.child.once('error', end)
    })
    this.ready = new Promise<void>((resolve, reject) => {
      this.child.on('message', (report: WorkerReport) => {
        if (report.type === 'ready') resolve()
        else this.onReport?.(report)
      })
      void this.exited.then(() =>
        reject(new RenderError('worker_unavailable', 'The render worker process ended before it was ready.')),
      )
    })
    // A worker that never gets a render must not leave an unhandled rejection behind.
    this.ready.catch(() => {})
  }

  get alive(): boolean {
    return !this.ended && this.child.exitCode === null && this.child.signalCode === null
  }

  /** The end of what Ghostscript wrote on stderr since the last call. */
  takeStderr(): string {
    const tail = this.stderr
    this.stderr = ''
    return tail
  }

  send(command: RenderCommand): void {
    // A worker that died in between reports through onExit; the send error itself says nothing more.
    this.child.send(command, (error) => {
      if (error) void this.kill()
    })
  }

  /** Kills the process (SIGKILL: a call into libgs cannot be interrupted any other way). */
  kill(): Promise<void> {
    if (this.alive) this.child.kill('SIGKILL')
    return this.exited
  }
}
