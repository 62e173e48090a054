import { setTimeout as sleep } from 'node:timers/promises'
import type { ResolvedPrintOptions } from '../../protocol/print-job.ts'
import { Backoff } from '../session/backoff.ts'
import { strings, text } from './attribute-values.ts'
import { enumNumber, type IppAttributes } from './ipp-codec.ts'
import { IppError } from './ipp-error.ts'
import type { IppHttpOptions } from './ipp-http.ts'
import { cancelJob, getJobAttributes, printJob } from './ipp-operations.ts'
import { type IppEndpoint, parseIppUri } from './ipp-uri.ts'
import { ippJobAttributes } from './job-attributes.ts'
import type { IppPrinterDescription } from './printer-description.ts'

export interface IppJobOutcome {
  state: 'completed' | 'aborted' | 'canceled'
  /** job-state-reasons (RFC 8011 §5.3.8) less "none". */
  reasons: string[]
  /** job-state-message (RFC 8011 §5.3.9), or what the hub knows when the printer said nothing. */
  message: string | null
  /** The printer's job-id; null when the job was canceled before the printer accepted it. */
  jobId: number | null
}

export interface IppPrintRequest {
  file: string
  format: 'application/pdf' | 'image/pwg-raster'
  jobName: string
  options: ResolvedPrintOptions
  printer: IppPrinterDescription
  /** How often the job's state is asked for; 1 s unless told. */
  pollMs?: number
  /** From the first request until the job ends; busy retries and following included. */
  timeoutMs: number
  signal?: AbortSignal
  tls?: IppHttpOptions['tls']
}

const DEFAULT_POLL_MS = 1_000
/** The longest one Get-Job-Attributes may take while following, so one lost answer does not use it all. */
const POLL_REQUEST_TIMEOUT_MS = 30_000
/** How long Cancel-Job and the look at the job after it may take. */
const CANCEL_TIMEOUT_MS = 10_000
/** Waits between Print-Jobs answered "busy": exponential with jitter, from 0.5 s up to 5 s. */
const BUSY_RETRY_MIN_MS = 500
const BUSY_RETRY_MAX_MS = 5_000
/**
 * Print-Job answers that mean "try again later": server-error-busy (RFC 8011 §B.1.5.8) and
 * server-error-service-unavailable (§B.1.5.3).
 */
const TRY_AGAIN_LATER = new Set(['server-error-busy', 'server-error-service-unavailable'])

/** RFC 8011 §5.3.7 job-state values that end a job. */
const TERMINAL_STATES: Readonly<Record<number, IppJobOutcome['state']>> = {
  7: 'canceled',
  8: 'aborted',
  9: 'completed',
}
const JOB_STATE_ATTRIBUTES = ['job-state', 'job-state-reasons', 'job-state-message'] as const

/**
 * Prints a file on an IPP printer: Print-Job with the job's attributes (ippJobAttributes) and the document,
 * sent again while the printer answers busy, then Get-Job-Attributes every `pollMs` until the job is
 * completed, aborted or canceled. An aborted `signal` cancels: Cancel-Job for a job the printer accepted
 * (also one whose Print-Job had sent all of the document and awaited its answer when the signal fired), and
 * the outcome is `canceled` (or how the job had already ended). Rejects with an IppError when the
 * printer cannot be reached or refuses the job, or when `timeoutMs` passes first (the error then names
 * the printer's job, which may still print).
 */
export async function printIppJob(uri: string, job: IppPrintRequest): Promise<IppJobOutcome> {
  const endpoint = parseIppUri(uri)
  const deadline = Date.now() + job.timeoutMs
  let jobId: number
  try {
    jobId = await submit(endpoint, job, deadline)
  } catch (error) {
    // Aborted before the printer said it had the job; or the caller aborted and the exchange then failed.
    if (error instanceof IppError && (error.kind === 'aborted' || job.signal?.aborted))
      return {
        state: 'canceled',
        reasons: [],
        message: 'canceled before the printer accepted the job',
        jobId: null,
      }
    throw error
  }
  return follow(endpoint, jobId, job, deadline)
}

function remainingMs(deadline: number, job: IppPrintRequest, jobId?: number): number {
  const left = deadline - Date.now()
  if (left > 0) return left
  throw new IppError('timeout', `the job did not finish within ${job.timeoutMs} ms`, { jobId })
}

/** Print-Job, again after a pause while the printer says to try later; the printer's job-id. */
async function submit(endpoint: IppEndpoint, job: IppPrintRequest, deadline: number): Promise<number> {
  const attributes = ippJobAttributes(job.options, job.printer)
  const document = { path: job.file, format: job.format, jobName: job.jobName }
  const backoff = new Backoff(BUSY_RETRY_MIN_MS, BUSY_RETRY_MAX_MS)
  for (;;) {
    const timeoutMs = remainingMs(deadline, job)
    try {
      const created = await printJob(endpoint, document, attributes, {
        timeoutMs,
        signal: job.signal,
        tls: job.tls,
      })
      const jobId = created['job-id']
      if (typeof jobId !== 'number' || !Number.isInteger(jobId))
        throw new IppError('malformed', 'Print-Job was accepted without a job-id')
      return jobId
    } catch (error) {
      if (!(error instanceof IppError) || !TRY_AGAIN_LATER.has(error.ippStatus ?? '')) throw error
      const pause = backoff.next()
      if (deadline - Date.now() <= pause)
        throw new IppError('timeout', `the printer was still busy after ${job.timeoutMs} ms`, {
          ippStatus: error.ippStatus ?? undefined,
          cause: error,
        })
      await pauseUnlessAborted(pause, job.signal)
    }
  }
}

async function pauseUnlessAborted(ms: number, signal: AbortSignal | undefined): Promise<void> {
  try {
    await sleep(ms, undefined, { signal })
  } catch (error) {
    throw new IppError('aborted', 'the request was aborted', { cause: error })
  }
}

/** Follows an accepted job to its end (RFC 8011 §4.3.4 Get-Job-Attributes). */
async function follow(
  endpoint: IppEndpoint,
  jobId: number,
  job: IppPrintRequest,
  deadline: number,
): Promise<IppJobOutcome> {
  const pollMs = job.pollMs ?? DEFAULT_POLL_MS
  for (;;) {
    if (job.signal?.aborted) return cancel(endpoint, jobId, job)
    const timeoutMs = Math.min(remainingMs(deadline, job, jobId), POLL_REQUEST_TIMEOUT_MS)
    try {
      const attributes = await getJobAttributes(endpoint, jobId, JOB_STATE_ATTRIBUTES, {
        timeoutMs,
        signal: job.signal,
        tls: job.tls,
      })
      const outcome = terminalOutcome(attributes, jobId)
      if (outcome) return outcome
    } catch (error) {
      if (!(error instanceof IppError)) throw error
      if (error.kind === 'aborted') return cancel(endpoint, jobId, job)
      // A printer keeps an ended job only for a while (RFC 8011 §4.3.4: client-error-not-found once it is
      // gone); CUPS's ipp backend takes that as the job having finished, and so does the hub.
      if (error.ippStatus === 'client-error-not-found')
        return {
          state: 'completed',
          reasons: ['job-not-found'],
          message: 'the printer no longer knows the job; taken as finished',
          jobId,
        }
      if (!isPassing(error)) throw error
    }
    if (deadline - Date.now() <= pollMs)
      throw new IppError('timeout', `the job did not finish within ${job.timeoutMs} ms`, { jobId })
    try {
      await pauseUnlessAborted(pollMs, job.signal)
    } catch {
      return cancel(endpoint, jobId, job)
    }
  }
}

/**
 * A failed look at a job that may pass: a printer that restarts or drops off the network for a moment,
 * answers busy, or whose web server fails for a moment. The job is asked for again until the deadline.
 */
function isPassing(error: IppError): boolean {
  if (error.kind === 'unreachable' || error.kind === 'timeout') return true
  if (error.kind === 'http') return (error.httpStatus ?? 0) >= 500
  return error.kind === 'ipp_status' && TRY_AGAIN_LATER.has(error.ippStatus ?? '')
}

const stateReasons = (attributes: IppAttributes) =>
  strings(attributes['job-state-reasons']).filter((reason) => reason !== 'none')

function terminalOutcome(attributes: IppAttributes, jobId: number): IppJobOutcome | null {
  const state = TERMINAL_STATES[enumNumber('job-state', attributes['job-state']) ?? 0]
  if (state === undefined) return null
  return { state, reasons: stateReasons(attributes), message: text(attributes['job-state-message']), jobId }
}

/**
 * Cancel-Job (RFC 8011 §4.3.3), then one look at the job: a job that had already ended reports how it
 * ended; otherwise it is `canceled` (the printer may still be stopping it: processing-to-stop-point).
 */
async function cancel(endpoint: IppEndpoint, jobId: number, job: IppPrintRequest): Promise<IppJobOutcome> {
  const options = { timeoutMs: CANCEL_TIMEOUT_MS, tls: job.tls }
  let cancelProblem: string | null = null
  try {
    await cancelJob(endpoint, jobId, options)
  } catch (error) {
    if (!(error instanceof IppError)) throw error
    // client-error-not-possible: the job had already ended (RFC 8011 §4.3.3).
    if (error.ippStatus !== 'client-error-not-possible') cancelProblem = error.message
  }
  const attributes = await getJobAttributes(endpoint, jobId, JOB_STATE_ATTRIBUTES, options).catch(() => null)
  const ended = attributes && terminalOutcome(attributes, jobId)
  if (ended) return ended
  return {
    state: 'canceled',
    reasons: attributes ? stateReasons(attributes) : [],
    message: cancelProblem
      ? `Cancel-Job failed: ${cancelProblem}`
      : attributes && text(attributes['job-state-message']),
    jobId,
  }
}
