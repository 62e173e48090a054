import { type PrintJobStatus, TERMINAL_PRINT_JOB_STATUSES } from '../../protocol/enums.ts'
import type { PrintJob, WaitingReason } from '../../protocol/print-job.ts'
import type { PrintJobDetails } from '../storage/print-jobs.ts'
import { type Html, html } from './layout.ts'

/** A job's status in words (the badge's colour only repeats it). */
export const STATUS_WORDS: Record<PrintJobStatus, string> = {
  pending: 'Pending',
  reserved: 'Reserved by its hub',
  printing: 'Printing',
  printed: 'Printed',
  failed: 'Failed',
  cancelled: 'Cancelled',
}

type Badge = '' | 'ok' | 'bad' | 'warn'

/** The badge's colour: green printed, red failed, amber while the printer holds the job up; grey otherwise. */
const badgeOf = (job: Pick<PrintJob, 'status' | 'waiting_reason'>): Badge =>
  job.status === 'printed' ? 'ok' : job.status === 'failed' ? 'bad' : job.waiting_reason ? 'warn' : ''

/** Why a job waits (docs/running-a-hub.md: waiting_reason), in words. */
const WAITING_WORDS: Record<WaitingReason, string> = {
  printer_unreachable: 'The printer cannot be reached',
  paper_out: 'The printer is out of paper',
  cover_open: "The printer's cover is open",
  paper_jam: 'The printer has a paper jam',
  paused: 'The printer is paused',
}

const CANCEL_WORDS = { cancelled: 'Cancelled from the API or the console', expired: 'Expired' } as const

export const isFinal = (status: PrintJobStatus): boolean =>
  (TERMINAL_PRINT_JOB_STATUSES as readonly PrintJobStatus[]).includes(status)

/** Whether the API's cancel operation may take the job (docs/job-lifecycle.md: pending or reserved). */
export const isCancellable = (status: PrintJobStatus): boolean =>
  status === 'pending' || status === 'reserved'

/** A timestamp as people read it, in UTC to the second ("UTC" left out where a heading says it); "Not yet" for none. */
export function timeWords(iso: string | null, zone = true): string {
  if (iso === null) return 'Not yet'
  return `${iso.slice(0, 10)} ${iso.slice(11, 19)}${zone ? ' UTC' : ''}`
}

/** A `<time>` element for a timestamp; `field` marks it for the live update (console.js). */
export function timeElement(
  iso: string | null,
  { field, zone = true }: { field?: string; zone?: boolean } = {},
): Html {
  const mark = field ? html` data-job-field="${field}"` : ''
  return html`<time${mark}${iso ? html` datetime="${iso}"` : ''}>${timeWords(iso, zone)}</time>`
}

/** The document's format and language: "PDF" or "RAW (ESC/POS)". */
export function documentWords(job: Pick<PrintJob, 'document_format' | 'document_raw_language'>): string {
  if (job.document_format === 'pdf') return 'PDF'
  const language = job.document_raw_language
  const name = language === 'escpos' ? 'ESC/POS' : language?.toUpperCase()
  return name ? `RAW (${name})` : 'RAW'
}

/** The status as a badge, in words. */
export function statusBadge(job: Pick<PrintJob, 'status' | 'waiting_reason'>, field?: string): Html {
  const badge = badgeOf(job)
  const mark = field ? html` data-job-field="${field}"` : ''
  return html`<span class="${badge ? `badge ${badge}` : 'badge'}"${mark}>${STATUS_WORDS[job.status]}</span>`
}

/** The timeline's entries (created, reserved, printing, completed, cancel requested), in the order they happen. */
export const TIMELINE = [
  ['created_at', 'Created'],
  ['reserved_at', 'Reserved by its hub'],
  ['started_at', 'Printing started'],
  ['completed_at', 'Completed'],
  ['cancel_requested_at', 'Cancel requested'],
] as const

type TimeField = (typeof TIMELINE)[number][0]

/** The texts of the job page that change while a job is in flight, each in an element `data-job-field`. */
export interface JobState {
  status: PrintJobStatus
  final: boolean
  cancellable: boolean
  /** The status badge's colour class (the words are in `text.status`). */
  badge: Badge
  text: Record<'status' | 'waiting' | 'failure' | 'failure_detail' | 'cancel' | TimeField, string>
  times: Record<TimeField, string | null>
}

/** What the job page shows of a job that may change, as the page renders it and GET …/state returns it. */
export function jobState(job: PrintJobDetails): JobState {
  const times = Object.fromEntries(TIMELINE.map(([field]) => [field, job[field]])) as JobState['times']
  const cancel = job.cancel_reason ? CANCEL_WORDS[job.cancel_reason] : 'None'
  return {
    status: job.status,
    final: isFinal(job.status),
    cancellable: isCancellable(job.status),
    badge: badgeOf(job),
    text: {
      status: STATUS_WORDS[job.status],
      waiting: job.waiting_reason ? WAITING_WORDS[job.waiting_reason] : 'Not waiting',
      failure: job.failure_reason ?? 'None',
      failure_detail: job.failure_detail ?? 'None',
      cancel,
      ...(Object.fromEntries(TIMELINE.map(([field]) => [field, timeWords(job[field])])) as Record<
        TimeField,
        string
      >),
    },
    times,
  }
}

/** A job id as a short name (its first eight hex digits), for tables and titles. */
export const shortId = (id: string): string => id.slice(0, 8)
