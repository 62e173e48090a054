import { PRINT_JOB_STATUSES, type PrintJobStatus } from '../../protocol/enums.ts'
import { isUuid } from '../uuid.ts'

/** The filters and page of GET /console/jobs, as the API's list takes them. */
export interface JobsQuery {
  status?: PrintJobStatus
  printer_id?: string
  cursor?: string
}

export type ParsedJobsQuery = { ok: true; query: JobsQuery } | { ok: false; problem: string }

/**
 * The jobs page's query string: an empty value means "any"; a value that is no status, no printer id or no
 * job id (as the cursor) is a problem told in fixed words (never echoing the value).
 */
export function parseJobsQuery(raw: unknown): ParsedJobsQuery {
  const params = (raw ?? {}) as Record<string, unknown>
  const query: JobsQuery = {}
  const { status, printer_id, cursor } = params
  if (status !== undefined && status !== '') {
    if (typeof status !== 'string' || !(PRINT_JOB_STATUSES as readonly string[]).includes(status))
      return { ok: false, problem: 'That status is not one of the job statuses. Choose one from the list.' }
    query.status = status as PrintJobStatus
  }
  if (printer_id !== undefined && printer_id !== '') {
    if (typeof printer_id !== 'string' || !isUuid(printer_id))
      return { ok: false, problem: 'That printer is not a printer id. Choose one from the list.' }
    query.printer_id = printer_id
  }
  if (cursor !== undefined && cursor !== '') {
    if (typeof cursor !== 'string' || !isUuid(cursor)) return { ok: false, problem: STALE_PAGE }
    query.cursor = cursor
  }
  return { ok: true, query }
}

/** A cursor that names no job of the account (the API's 422 `Invalid cursor`). */
export const STALE_PAGE = 'That page link does not name a job of this list. Start again from the newest jobs.'

/** The query string of a jobs page with these filters (and page): empty values left out. */
export function jobsQueryString(query: JobsQuery): string {
  const params = new URLSearchParams()
  if (query.status) params.set('status', query.status)
  if (query.printer_id) params.set('printer_id', query.printer_id)
  if (query.cursor) params.set('cursor', query.cursor)
  const text = params.toString()
  return text ? `?${text}` : ''
}
