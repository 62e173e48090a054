import { type ChildProcess, spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { symlink } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { GhostscriptReport, LineSplitter } from './ghostscript-report.ts'

// One long-lived `gs` process that inspects PDFs one at a time, fed PostScript commands on stdin, so that a
// document costs its interpretation only, not Ghostscript's start-up (about 40 ms of the 50 of a `gs` per
// PDF). Each document runs between `save` and `restore` (what it loaded, fonts included, is gone before the
// next one), and its output ends with a marker line carrying a random nonce of its own: the document cannot
// end its report early, and the next one's output is never read as its own. stderr is joined to stdout by
// the shell that execs gs, so that messages keep their order on one pipe.

/** Options Ghostscript inspects with, whether in a worker or as a process per PDF. */
export const INSPECTION_OPTIONS: readonly string[] = [
  '-dSAFER',
  '-dNOPAUSE',
  '-dNOPROMPT',
  '-dPDFSTOPONERROR',
  '-sDEVICE=nullpage',
  '-r72',
]

/** A worker's arguments: no file, so gs reads commands from stdin; it may read its documents' directory. */
export function workerArgs(documentDir: string): string[] {
  return [...INSPECTION_OPTIONS, `--permit-file-read=${resolve(documentDir)}/`]
}

export function childEnvironment(): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('GS_')))
}

const MARKER = '%%inspection'

/** The workers' directories, removed at the latest when this process exits (a killed gs leaves its own). */
const directories = new Set<string>()
process.once('exit', () => {
  for (const dir of directories) rmSync(dir, { recursive: true, force: true })
})

function removeDirectory(dir: string): void {
  if (directories.delete(dir)) rmSync(dir, { recursive: true, force: true })
}

// <path> <nonce> inspectpdf -: interprets the PDF, keeping only whether it stopped with an error, undoes
// everything it did (restore), then prints the marker: "%%inspection <nonce> ok|failed clean|dirty" (dirty:
// the restore itself failed, so the worker is not used again). Only simple objects and the nonce, made
// before the save, are on the operand stack at the restore.
const PROLOGUE = `/inspectpdf {
  save 3 1 roll exch
  { (r) file runpdf } stopped
  count 3 sub { exch pop } repeat
  cleardictstack $error /newerror false put
  3 -1 roll { restore //false } stopped { pop //true } if
  (\\n${MARKER} ) print 3 -1 roll print
  exch { ( failed) } { ( ok) } ifelse print
  { ( dirty) } { ( clean) } ifelse print (\\n) print flush
} bind def
`

export type WorkerOutcome =
  /** Ghostscript finished the document (failed: it stopped with an error). */
  | { kind: 'done'; failed: boolean; report: GhostscriptReport }
  /** The process ended during the document (a crash, or killed). */
  | { kind: 'exited'; code: number | null; signal: NodeJS.Signals | null; report: GhostscriptReport }
  /** The process ended before it took any command: Ghostscript could not be started. */
  | { kind: 'unavailable' }

interface Pending {
  nonce: string
  report: GhostscriptReport
  settle: (outcome: WorkerOutcome) => void
}

export class GhostscriptWorker {
  readonly child: ChildProcess
  /** Resolves once the process has ended. */
  readonly exited: Promise<void>
  /** Documents given to this process. */
  documents = 0
  /** The restore after a document failed: state may be left over, so the worker takes no more. */
  dirty = false
  /** Ghostscript has started and read its prologue. */
  started = false
  readonly #dir: string
  readonly #readyLine: string
  #pending: Pending | undefined
  #killed = false
  #ended: { code: number | null; signal: NodeJS.Signals | null } | undefined

  constructor(gsPath: string) {
    this.#dir = mkdtempSync(join(tmpdir(), 'pdf-inspector-'))
    directories.add(this.#dir)
    const readyNonce = randomBytes(8).toString('hex')
    this.#readyLine = `${MARKER} ${readyNonce} ready`
    this.child = spawn('/bin/sh', ['-c', 'exec "$0" "$@" 2>&1', gsPath, ...workerArgs(this.#dir)], {
      stdio: ['pipe', 'pipe', 'ignore'],
      env: childEnvironment(),
    })
    // A write to a process that has just died fails with EPIPE; its exit says what happened.
    this.child.stdin?.on('error', () => {})
    // An idle worker does not keep its parent running (a document under way does, by its deadline's timer);
    // should the parent end without close(), gs reads the end of its stdin and exits.
    this.child.unref()
    for (const pipe of [this.child.stdin, this.child.stdout])
      (pipe as { unref?: () => void } | null)?.unref?.()
    const lines = new LineSplitter((line) => this.#line(line))
    this.child.stdout?.setEncoding('latin1').on('data', (chunk: string) => lines.feed(chunk))
    this.exited = new Promise<void>((resolveExit) => {
      const end = (code: number | null, signal: NodeJS.Signals | null) => {
        if (this.#ended) return
        this.#ended = { code, signal }
        removeDirectory(this.#dir)
        this.#settle()
        resolveExit()
      }
      // 'close', not 'exit': Ghostscript's last words (a crash's message) are read by then.
      this.child.once('close', end)
      // A process that could not be spawned emits 'error' and perhaps no 'close'.
      this.child.once('error', () => end(null, null))
    })
    this.child.stdin?.write(`${PROLOGUE}(\\n${this.#readyLine}\\n) print flush\n`)
  }

  get alive(): boolean {
    return this.#ended === undefined
  }

  get #usable(): boolean {
    return this.alive && !this.#killed
  }

  /** Interprets the PDF at `filePath`; one document at a time. */
  async inspect(filePath: string): Promise<WorkerOutcome> {
    this.documents++
    const link = join(this.#dir, `document-${this.documents}.pdf`)
    try {
      if (this.#usable) await symlink(resolve(filePath), link)
    } catch (error) {
      if (this.#usable) throw error
    }
    // Killed or ended before or while the link was made: its directory went with it.
    if (!this.#usable) {
      await this.exited
      return this.#endOutcome(new GhostscriptReport())
    }
    try {
      return await new Promise<WorkerOutcome>((settle) => {
        const nonce = randomBytes(8).toString('hex')
        this.#pending = { nonce, report: new GhostscriptReport(), settle }
        if (!this.alive) this.#settle()
        else
          this.child.stdin?.write(
            `clear cleardictstack <${Buffer.from(link).toString('hex')}> (${nonce}) inspectpdf\n`,
          )
      })
    } finally {
      // At once, not awaited: the outcome reaches the inspector before its deadline's timer can fire.
      rmSync(link, { force: true })
    }
  }

  /** Kills the process (SIGKILL: Ghostscript may be deep in a hostile document). */
  kill(): Promise<void> {
    if (this.alive) this.child.kill('SIGKILL')
    this.#killed = true
    removeDirectory(this.#dir)
    return this.exited
  }

  #line(line: string): void {
    if (!this.started) {
      if (line === this.#readyLine) this.started = true
      return
    }
    const pending = this.#pending
    if (!pending) return
    const end = new RegExp(`^${MARKER} ${pending.nonce} (ok|failed) (clean|dirty)$`).exec(line)
    if (!end) {
      pending.report.line(line)
      return
    }
    this.#pending = undefined
    if (end[2] === 'dirty') this.dirty = true
    pending.settle({ kind: 'done', failed: end[1] === 'failed', report: pending.report })
  }

  /** Settles the document under way, if any, with the end of the process. */
  #settle(): void {
    const pending = this.#pending
    if (!pending || !this.#ended) return
    this.#pending = undefined
    pending.settle(this.#endOutcome(pending.report))
  }

  #endOutcome(report: GhostscriptReport): WorkerOutcome {
    if (!this.started || !this.#ended) return { kind: 'unavailable' }
    return { kind: 'exited', ...this.#ended, report }
  }
}
