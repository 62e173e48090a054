import { type ChildProcess, spawn } from 'node:child_process'
import { open } from 'node:fs/promises'
import { resolve } from 'node:path'
import { ApiError } from '../api-error.ts'
import { FairQueue } from './fair-queue.ts'
import { sniffDocument } from './sniff.ts'

// PDF security inspection: Ghostscript interprets every page to the `nullpage` device (no raster kept) in a
// child process, so a slow or hostile document is killed at the deadline; an in-process call
// (ghostscript4js) could not be stopped. Policy:
// - -dSAFER always (never -dNOSAFER): no file access beyond the input and Ghostscript's own resources, no
//   %pipe%, no device or parameter changes from the document. GS_* variables (GS_OPTIONS could add
//   -dNOSAFER, GS_LIB could replace the init files) are removed from the child's environment.
// - -dPDFSTOPONERROR stops at the first error instead of carrying on. Ghostscript 10 still rebuilds a broken
//   or missing cross-reference table silently ("PDF file was repaired"): such a file (a truncated upload, a
//   bad xref offset) is refused as pdf_invalid too. A repaired file prints whatever the repair heuristics
//   recovered, which may differ on the hub's Ghostscript, and is most often a cut-off transfer. Other
//   errors that Ghostscript reports as ignored (a missing dictionary entry, an unknown font) pass.
// - A PDF that needs a user password is refused (pdf_encrypted); one with only an owner password opens.
// - Deadline, full queue or no Ghostscript: 503 inspection_unavailable with Retry-After. A document that
//   misses the deadline is not judged invalid: the deadline is also missed under load, and a retry after
//   Retry-After may succeed.
// - Accounts share the workers fairly: each has its own queue of at most maxQueuedPerAccount (beyond it the
//   account alone gets 503 queue_full, details.scope "account"), and a free worker takes the next PDF of the
//   account served least recently. One account's flood waits behind itself, not in front of the others.
// The worst-case wait is (⌈maxQueued / maxConcurrent⌉ + 1) × timeoutMs.

export interface PdfInspectorOptions {
  timeoutMs: number
  maxConcurrent: number
  /** Waiting inspections of all accounts together. */
  maxQueued: number
  /** Waiting inspections of one account. */
  maxQueuedPerAccount: number
  /** The Ghostscript program; `gs` on PATH by default. */
  gsPath?: string
}

export interface PdfInspection {
  pages: number
}

export interface PdfInspector {
  /** Inspects the PDF at `filePath`, in `accountId`'s turn. */
  inspect(filePath: string, accountId: string): Promise<PdfInspection>
  /** Kills running inspections and refuses queued and later ones. */
  close(): void
}

/** Seconds to wait when Ghostscript cannot be started at all (missing or out of processes). */
const SPAWN_FAILURE_RETRY_SECONDS = 30
/** Output lines longer than this are cut: only short status lines are read. */
const MAX_LINE = 4096

/** Ghostscript's arguments for one inspection. */
export function ghostscriptArgs(filePath: string): string[] {
  return [
    '-dSAFER',
    '-dBATCH',
    '-dNOPAUSE',
    '-dNOPROMPT',
    '-dPDFSTOPONERROR',
    '-sDEVICE=nullpage',
    '-r72',
    '-f',
    resolve(filePath),
  ]
}

function childEnvironment(): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('GS_')))
}

/** What Ghostscript said, read line by line as it runs (its output is never kept whole). */
class GhostscriptReport {
  declaredPages: number | null = null
  lastPage = 0
  noPages = false
  repaired = false
  passwordNeeded = false
  /** A reader for one output stream (stdout and stderr each keep their own unfinished line). */
  reader(): { feed(chunk: string): void; end(): void } {
    let partial = ''
    return {
      feed: (chunk) => {
        const lines = (partial + chunk).split(/\r?\n/)
        partial = (lines.pop() ?? '').slice(-MAX_LINE)
        for (const line of lines) this.line(line.slice(0, MAX_LINE))
      },
      end: () => {
        this.line(partial)
        partial = ''
      },
    }
  }

  private line(line: string): void {
    const processing = /^Processing pages (\d+) through (\d+)\./.exec(line)
    if (processing) this.declaredPages = Number(processing[2]) - Number(processing[1]) + 1
    const page = /^Page (\d+)$/.exec(line)
    if (page) this.lastPage = Number(page[1])
    if (/No pages will be processed/i.test(line)) this.noPages = true
    // Ghostscript 10: "PDF file was repaired"; 9.x: "The file has been damaged", "attempt to recover",
    // "An error occurred while reading an XREF table"
    if (
      /file was repaired|has been damaged|attempt to (recover|reconstruct)|error occurred while reading an XREF/i.test(
        line,
      )
    ) {
      this.repaired = true
    }
    if (/requires a password|password did not work|cannot decrypt/i.test(line)) this.passwordNeeded = true
  }
}

function unavailable(
  reason: string,
  retryAfterSeconds: number,
  details: Record<string, unknown> = {},
): ApiError {
  return new ApiError(
    'inspection_unavailable',
    'The document could not be inspected now; retry after the Retry-After delay.',
    { reason, ...details },
    { 'Retry-After': String(Math.max(1, Math.ceil(retryAfterSeconds))) },
  )
}

function invalid(reason: string, message: string): ApiError {
  return new ApiError('pdf_invalid', message, { reason })
}

/** The outcome of a finished Ghostscript run. */
function verdict(
  report: GhostscriptReport,
  code: number | null,
  signal: NodeJS.Signals | null,
): PdfInspection {
  if (report.passwordNeeded)
    throw new ApiError('pdf_encrypted', 'The PDF is encrypted and needs a password to open.')
  if (signal) {
    if (signal === 'SIGKILL' || signal === 'SIGTERM')
      throw unavailable('ghostscript_killed', SPAWN_FAILURE_RETRY_SECONDS)
    throw invalid('render_crashed', 'The PDF could not be rendered.')
  }
  if (code !== 0) throw invalid('render_failed', 'The PDF is not structurally sound or cannot be rendered.')
  if (report.repaired) {
    throw invalid(
      'repaired',
      'The PDF is damaged (for example truncated, or with a broken cross-reference table).',
    )
  }
  const pages = report.declaredPages ?? report.lastPage
  if (report.noPages || pages < 1) throw invalid('no_pages', 'The PDF has no pages to print.')
  return { pages }
}

/** Refuses, before Ghostscript runs, a file that Ghostscript would not take as a PDF (e.g. PostScript). */
async function assertPdfHeader(filePath: string): Promise<void> {
  const file = await open(filePath, 'r')
  try {
    const head = Buffer.alloc(2048)
    const { bytesRead } = await file.read(head, 0, head.length, 0)
    if (sniffDocument(head.subarray(0, bytesRead)).kind !== 'pdf') {
      throw invalid('not_a_pdf', 'The document is not a PDF.')
    }
  } finally {
    await file.close()
  }
}

export function createPdfInspector(options: PdfInspectorOptions): PdfInspector {
  const { timeoutMs, maxConcurrent, maxQueued, maxQueuedPerAccount } = options
  const gsPath = options.gsPath ?? 'gs'
  const retrySeconds = Math.max(1, Math.ceil(timeoutMs / 1000))
  const running = new Set<ChildProcess>()
  const queue = new FairQueue<{ start: () => void; refuse: (error: ApiError) => void }>()
  let active = 0
  let closed = false

  function release(): void {
    active--
    const next = queue.shift()
    if (next) {
      active++
      next.start()
    }
  }

  function run(filePath: string): Promise<PdfInspection> {
    return new Promise<PdfInspection>((resolvePromise, reject) => {
      if (closed) {
        reject(unavailable('closed', retrySeconds))
        return
      }
      const report = new GhostscriptReport()
      let timedOut = false
      const child = spawn(gsPath, ghostscriptArgs(filePath), {
        stdio: ['ignore', 'pipe', 'pipe'],
        env: childEnvironment(),
      })
      running.add(child)
      const timer = setTimeout(() => {
        timedOut = true
        child.kill('SIGKILL')
      }, timeoutMs)
      const out = report.reader()
      const err = report.reader()
      child.stdout?.setEncoding('latin1').on('data', (chunk: string) => out.feed(chunk))
      child.stderr?.setEncoding('latin1').on('data', (chunk: string) => err.feed(chunk))
      const finish = (outcome: () => PdfInspection) => {
        clearTimeout(timer)
        running.delete(child)
        try {
          resolvePromise(outcome())
        } catch (error) {
          reject(error)
        }
      }
      child.once('error', () => {
        finish(() => {
          throw unavailable('ghostscript_unavailable', SPAWN_FAILURE_RETRY_SECONDS)
        })
      })
      child.once('close', (code, signal) => {
        out.end()
        err.end()
        finish(() => {
          if (timedOut) throw unavailable('timeout', retrySeconds)
          if (closed) throw unavailable('closed', retrySeconds)
          return verdict(report, code, signal)
        })
      })
    })
  }

  async function inspectNow(filePath: string): Promise<PdfInspection> {
    try {
      await assertPdfHeader(filePath)
      return await run(filePath)
    } finally {
      release()
    }
  }

  return {
    inspect(filePath, accountId) {
      if (closed) return Promise.reject(unavailable('closed', retrySeconds))
      if (active < maxConcurrent) {
        active++
        queue.markServed(accountId)
        return inspectNow(filePath)
      }
      if (queue.sizeOf(accountId) >= maxQueuedPerAccount) {
        return Promise.reject(unavailable('queue_full', retrySeconds, { scope: 'account' }))
      }
      if (queue.size >= maxQueued) return Promise.reject(unavailable('queue_full', retrySeconds))
      return new Promise<PdfInspection>((resolvePromise, reject) => {
        queue.push(accountId, {
          start: () => inspectNow(filePath).then(resolvePromise, reject),
          refuse: reject,
        })
      })
    },
    close() {
      closed = true
      for (const waiting of queue.drain()) waiting.refuse(unavailable('closed', retrySeconds))
      for (const child of running) child.kill('SIGKILL')
    },
  }
}
