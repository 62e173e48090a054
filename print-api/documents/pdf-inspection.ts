import { open } from 'node:fs/promises'
import { resolve } from 'node:path'
import { ApiError } from '../api-error.ts'
import { FairQueue } from './fair-queue.ts'
import type { GhostscriptReport } from './ghostscript-report.ts'
import { type GhostscriptWorker, INSPECTION_OPTIONS, type WorkerOutcome } from './ghostscript-worker.ts'
import { GhostscriptWorkers } from './ghostscript-workers.ts'
import { sniffDocument } from './sniff.ts'

// PDF security inspection: Ghostscript interprets every page to the `nullpage` device (no raster kept) in
// long-lived `gs` child processes, up to maxConcurrent of them, each fed one document at a time on its stdin
// (ghostscript-worker.ts). A `gs` per PDF spent about 40 ms of its 50 starting Ghostscript; ghostscript4js,
// as the hub renders, starts a fresh instance per call (34 ms for the bench's label, against 10 ms warm)
// and could not be stopped at a deadline. A worker is killed at a document's deadline (and replaced), and
// replaced after DOCUMENTS_PER_WORKER documents; each document runs between save and restore, and its
// output is told from the next one's by a marker with a nonce of its own. Policy:
// - -dSAFER always (never -dNOSAFER): no file access beyond Ghostscript's own resources and the worker's own
//   directory, which holds only a link to the document under way; no %pipe%, no device or parameter changes
//   from the document. GS_* variables (GS_OPTIONS could add -dNOSAFER, GS_LIB could replace the init files)
//   are removed from the child's environment. Documents run by `runpdf`, never `run`: the PDF interpreter
//   only, whatever the file holds.
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
  /** Documents a Ghostscript process inspects before a fresh one replaces it; 200 by default. */
  documentsPerWorker?: number
  /** How long a Ghostscript process waits idle for the next document before it ends; 5 minutes by default. */
  workerIdleMs?: number
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
/** Bounds what a Ghostscript process may accumulate over documents (memory restore does not give back). */
const DOCUMENTS_PER_WORKER = 200
const WORKER_IDLE_MS = 5 * 60_000

/** One inspection as a process of its own (`gs` per PDF), with the options a worker inspects with. */
export function ghostscriptArgs(filePath: string): string[] {
  return [...INSPECTION_OPTIONS, '-dBATCH', '-f', resolve(filePath)]
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

function outcomeVerdict(outcome: WorkerOutcome): PdfInspection {
  if (outcome.kind === 'unavailable')
    throw unavailable('ghostscript_unavailable', SPAWN_FAILURE_RETRY_SECONDS)
  if (outcome.kind === 'done') return verdict(outcome.report, outcome.failed ? 1 : 0, null)
  // A process that ended in the middle of a document never passes it, whatever its exit code.
  return verdict(outcome.report, outcome.signal ? null : outcome.code || 1, outcome.signal)
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

/** A PdfInspector that also names its Ghostscript processes (for tests and benchmarks). */
export interface WarmPdfInspector extends PdfInspector {
  /** The Ghostscript processes running now. */
  readonly pids: number[]
}

export function createPdfInspector(options: PdfInspectorOptions): WarmPdfInspector {
  const { timeoutMs, maxConcurrent, maxQueued, maxQueuedPerAccount } = options
  const workers = new GhostscriptWorkers(
    options.gsPath ?? 'gs',
    options.documentsPerWorker ?? DOCUMENTS_PER_WORKER,
    options.workerIdleMs ?? WORKER_IDLE_MS,
  )
  const retrySeconds = Math.max(1, Math.ceil(timeoutMs / 1000))
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

  async function run(filePath: string): Promise<PdfInspection> {
    if (closed) throw unavailable('closed', retrySeconds)
    let worker: GhostscriptWorker
    try {
      worker = workers.take()
    } catch {
      throw unavailable('ghostscript_unavailable', SPAWN_FAILURE_RETRY_SECONDS)
    }
    let timedOut = false
    const timer = setTimeout(() => {
      timedOut = true
      void worker.kill()
    }, timeoutMs)
    try {
      const outcome = await worker.inspect(filePath)
      if (timedOut) throw unavailable('timeout', retrySeconds)
      if (closed) throw unavailable('closed', retrySeconds)
      return outcomeVerdict(outcome)
    } finally {
      clearTimeout(timer)
      // Its outcome may have come in just as the deadline killed it: it is never given back alive.
      if (timedOut) await worker.kill()
      workers.give(worker)
    }
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
    get pids() {
      return workers.pids
    },
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
      workers.close()
    },
  }
}
