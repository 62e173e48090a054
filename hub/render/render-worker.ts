import { mkdtemp, open, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import type { Logger } from 'pino'
import { type DirectoryChanges, watchDirectory } from './directory-changes.ts'
import {
  assertPdf,
  followsPolicy,
  ghostscriptArgs,
  MAX_DPI,
  MAX_PAGE_DOTS,
  MAX_PAGE_MM,
  MIN_DPI,
  maxPageDots,
  pageFileName,
} from './ghostscript-policy.ts'
import type { GreyPage } from './grey-page.ts'
import { parsePgmHeader, pgmFileLength, pgmToGreyPage } from './pgm.ts'
import { RenderError } from './render-error.ts'
import { WorkerProcess } from './worker-process.ts'

// Renders PDFs to 8-bit grey pages in a long-lived worker process (render-worker-process.ts) that runs
// Ghostscript through ghostscript4js. Rules:
// - One render at a time per worker; later renders wait their turn. The turn ends when Ghostscript ends,
//   not when the caller has taken every page: pages wait as files in the render's own directory, so a slow
//   printer holds no other printer's render.
// - Pages stream: page n is yielded as soon as its file holds every row, while Ghostscript works on the
//   next page (or ends its instance after the last). The render's directory is watched, so a page is read
//   when its last row is written; the poll is the fallback. A render that fails after some pages were
//   yielded throws at the next page.
// - Bounds, each failing only its own render with RenderError (`render_failed`) and a reason:
//   Ghostscript's time for the whole document (`deadlineMs`, from when the worker starts on it; the worker
//   is killed at the deadline), a page side over MAX_PAGE_MM (2000 mm) or a page over MAX_PAGE_DOTS at the
//   dpi asked (refused when Ghostscript starts writing that page; the deadline bounds the time spent
//   before), a file that is not a PDF (refused before Ghostscript sees it), and any Ghostscript error.
// - `convert` runs Ghostscript on a whole document into one output file (PWG raster for IPP printers)
//   under the same turn, deadline and restart rules.
// - A worker that failed, missed a deadline or was abandoned mid-render is killed and replaced at once, so
//   the next render starts on a fresh process. Pages are kept in memory one at a time.

export interface RenderWorkerOptions {
  logger?: Logger
  /** Where each render gets a fresh directory for its page files; the OS temp directory by default. */
  tempDir?: string
  /** How often a render's directory is looked at for a finished page; 10 ms by default. */
  pollIntervalMs?: number
}

/** What prints PDFs needs of a renderer: a RenderWorker, or a RenderPool of them. */
export type Renderer = Pick<RenderWorker, 'render' | 'convert'>

export interface RenderOptions {
  /** Dots per inch, both ways (MIN_DPI to MAX_DPI). */
  dpi: number
  /** Ghostscript's time for the whole document, from when the worker starts on it. */
  deadlineMs: number
}

/** One document in the worker. */
interface Run {
  worker: WorkerProcess
  /** How Ghostscript ended, once it has. */
  outcome: 'done' | RenderError | undefined
  /** Resolves when `outcome` is set. */
  ended: Promise<void>
  /** Ends the run (first call wins): a failure replaces the worker, then the next render may start. */
  end(outcome: 'done' | RenderError): void
}

type PageFile = GreyPage | 'missing' | 'incomplete'

export class RenderWorker {
  private worker: WorkerProcess | undefined
  private turn: Promise<void> = Promise.resolve()
  private nextId = 1
  private stopped = false
  private readonly pollIntervalMs: number

  constructor(private readonly options: RenderWorkerOptions = {}) {
    this.pollIntervalMs = options.pollIntervalMs ?? 10
  }

  /** The worker process's id, while one runs. */
  get pid(): number | undefined {
    return this.worker?.alive ? this.worker.child.pid : undefined
  }

  /** Starts the worker process now instead of at the first render. */
  async start(): Promise<void> {
    await this.current().ready
  }

  /**
   * The PDF's pages, in order, as they are rendered. Iterate to the end or stop early (`break`): stopping
   * early kills Ghostscript if it is still at work. Throws RenderError when the render fails.
   */
  render(pdfPath: string, options: RenderOptions): AsyncIterable<GreyPage> {
    return this.pages(resolve(pdfPath), options)
  }

  /** Kills the worker process (a render under way fails) and refuses later renders. */
  async stop(): Promise<void> {
    this.stopped = true
    const worker = this.worker
    this.worker = undefined
    await worker?.kill()
  }

  /**
   * Runs Ghostscript with `args` (which must follow ghostscript-policy.ts) on a whole PDF, for output that is
   * not a page stream (PWG raster for an IPP printer). Throws RenderError when it fails or misses the deadline.
   */
  async convert(pdfPath: string, args: string[], deadlineMs: number): Promise<void> {
    if (!followsPolicy(args))
      throw new RenderError('bad_options', "The arguments break the hub's Ghostscript policy.")
    if (!(deadlineMs > 0)) throw new RenderError('bad_options', 'deadlineMs must be positive.')
    await assertPdf(pdfPath)
    const release = await this.takeTurn()
    let run: Run | undefined
    try {
      const worker = this.current()
      await worker.ready
      run = this.begin(worker, args, deadlineMs, release)
      await run.ended
      if (run.outcome instanceof RenderError) throw run.outcome
    } finally {
      release()
      if (run && run.outcome !== 'done') await run.worker.exited
    }
  }

  private async *pages(pdfPath: string, options: RenderOptions): AsyncGenerator<GreyPage> {
    checkOptions(options)
    await assertPdf(pdfPath)
    const release = await this.takeTurn()
    let run: Run | undefined
    let dir: string | undefined
    let changes: DirectoryChanges | undefined
    try {
      dir = await mkdtemp(join(this.options.tempDir ?? tmpdir(), 'print-hub-render-'))
      changes = watchDirectory(dir)
      const worker = this.current()
      await worker.ready
      run = this.begin(worker, ghostscriptArgs(pdfPath, dir, options.dpi), options.deadlineMs, release)
      const limit = maxPageDots(options.dpi)
      for (let page = 1; ; page++) {
        const grey = await this.nextPage(run, changes, join(dir, pageFileName(page)), page, limit)
        if (!grey) return
        yield grey
      }
    } finally {
      changes?.close()
      run?.end(new RenderError('worker_unavailable', 'The render was abandoned.'))
      release()
      // A render that did not end well ends with its worker process gone (killed by end()).
      if (run && run.outcome !== 'done') await run.worker.exited
      if (dir) await rm(dir, { recursive: true, force: true })
    }
  }

  /** Waits for the previous render to end; returns this render's (idempotent) release. */
  private async takeTurn(): Promise<() => void> {
    let release!: () => void
    const previous = this.turn
    this.turn = new Promise<void>((resolve) => {
      release = resolve
    })
    await previous
    return release
  }

  private current(): WorkerProcess {
    if (this.stopped) throw new RenderError('worker_unavailable', 'The render worker is stopped.')
    if (!this.worker?.alive) {
      this.worker = new WorkerProcess()
      const worker = this.worker
      worker.onExit = () => {
        if (this.worker === worker) this.options.logger?.warn('render worker process ended')
      }
    }
    return this.worker
  }

  /** Kills `worker` and, unless stopped, starts its successor now so that the next render finds it ready. */
  private replace(worker: WorkerProcess): void {
    void worker.kill()
    if (this.worker !== worker) return
    this.worker = undefined
    if (!this.stopped) {
      this.options.logger?.info('render worker restarted')
      this.current()
    }
  }

  private begin(worker: WorkerProcess, args: string[], deadlineMs: number, release: () => void): Run {
    const id = this.nextId++
    let ended!: () => void
    const run: Run = {
      worker,
      outcome: undefined,
      ended: new Promise<void>((resolve) => {
        ended = resolve
      }),
      end: (outcome) => {
        if (run.outcome) return
        run.outcome = outcome
        clearTimeout(deadline)
        worker.onReport = undefined
        worker.onRunExit = undefined
        if (outcome !== 'done') this.replace(worker)
        release()
        ended()
      },
    }
    const deadline = setTimeout(() => {
      run.end(new RenderError('deadline', `Ghostscript did not finish within ${deadlineMs} ms.`))
    }, deadlineMs)
    worker.takeStderr()
    worker.onReport = (report) => {
      if (report.id !== id) return
      if (report.type === 'done') run.end('done')
      else {
        const said = lastLine(worker.takeStderr())
        const detail = said ? `: ${said}` : ''
        run.end(new RenderError('ghostscript_error', `Ghostscript failed (${report.error})${detail}`))
      }
    }
    worker.onRunExit = () => {
      run.end(
        this.stopped
          ? new RenderError('worker_unavailable', 'The render worker was stopped.')
          : new RenderError('worker_crashed', 'The render worker process ended during the render.'),
      )
    }
    worker.send({ type: 'render', id, args })
    return run
  }

  /** Page `page` once its file is complete; null after the last page. */
  private async nextPage(
    run: Run,
    changes: DirectoryChanges,
    file: string,
    page: number,
    limit: number,
  ): Promise<GreyPage | null> {
    for (;;) {
      // Read how Ghostscript stands before looking at the file: "done" then means the file is final.
      const outcome = run.outcome
      const seen = changes.count
      const found = await readPageFile(file, limit, page)
      if (typeof found === 'object') {
        await rm(file, { force: true })
        return found
      }
      if (outcome instanceof RenderError) throw outcome
      if (outcome === 'done') {
        if (found === 'incomplete')
          throw new RenderError('ghostscript_error', `Ghostscript left page ${page} incomplete.`)
        if (page === 1) throw new RenderError('no_pages', 'The PDF has no pages to print.')
        return null
      }
      await Promise.race([sleep(this.pollIntervalMs), run.ended, changes.after(seen)])
    }
  }
}

function checkOptions(options: RenderOptions): void {
  if (!Number.isInteger(options.dpi) || options.dpi < MIN_DPI || options.dpi > MAX_DPI)
    throw new RenderError('bad_options', `dpi must be an integer from ${MIN_DPI} to ${MAX_DPI}.`)
  if (!(options.deadlineMs > 0)) throw new RenderError('bad_options', 'deadlineMs must be positive.')
}

/** The page in `file` if it is complete; refuses a page over `limit` dots as soon as its header is there. */
async function readPageFile(file: string, limit: number, page: number): Promise<PageFile> {
  let handle: Awaited<ReturnType<typeof open>>
  try {
    handle = await open(file, 'r')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return 'missing'
    throw error
  }
  try {
    const { size } = await handle.stat()
    const head = Buffer.alloc(Math.min(size, 512))
    await handle.read(head, 0, head.length, 0)
    const header = parsePgmHeader(head)
    if (!header) return 'incomplete'
    if (header.width > limit || header.height > limit || header.width * header.height > MAX_PAGE_DOTS) {
      throw new RenderError(
        'page_too_big',
        `Page ${page} is ${header.width} × ${header.height} dots; at most ${limit} (${MAX_PAGE_MM} mm) a side ` +
          `and ${MAX_PAGE_DOTS} dots a page are rendered.`,
      )
    }
    const length = pgmFileLength(header)
    if (size < length) return 'incomplete'
    const bytes = Buffer.alloc(length)
    await handle.read(bytes, 0, length, 0)
    return pgmToGreyPage(bytes, header)
  } finally {
    await handle.close()
  }
}

function lastLine(text: string): string {
  const lines = text
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter(Boolean)
  return (lines.at(-1) ?? '').slice(0, 300)
}
