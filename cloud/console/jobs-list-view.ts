import { PRINT_JOB_STATUSES } from '../../protocol/enums.ts'
import type { PageOf } from '../../protocol/pagination.ts'
import type { PrintJob } from '../../protocol/print-job.ts'
import type { Printer } from '../../protocol/printer.ts'
import { documentWords, STATUS_WORDS, shortId, statusBadge, timeElement } from './job-view.ts'
import { type JobsQuery, jobsQueryString } from './jobs-query.ts'
import { Html, html } from './layout.ts'

/** The filter form: two labelled selects that keep the choice, sent with GET so that a page can be linked. */
function filterForm(printers: Printer[], query: JobsQuery): Html {
  const options = printers.map((p) => ({ value: p.printer_id, label: p.name }))
  // A printer that is no longer listed (removed) can still be filtered by; it is named by its id.
  if (query.printer_id && !printers.some((p) => p.printer_id === query.printer_id))
    options.push({ value: query.printer_id, label: `Printer ${shortId(query.printer_id)}` })
  const option = (value: string, label: string, selected: string | undefined) =>
    html`<option value="${value}"${value === (selected ?? '') ? html` selected` : ''}>${label}</option>`
  return html`<form class="stack" method="get" action="/console/jobs">
<label for="job-status">Status</label>
<select id="job-status" name="status">${option('', 'Any status', query.status)}${PRINT_JOB_STATUSES.map((s) => option(s, STATUS_WORDS[s], query.status))}</select>
<label for="job-printer">Printer</label>
<select id="job-printer" name="printer_id">${option('', 'Any printer', query.printer_id)}${options.map((p) => option(p.value, p.label, query.printer_id))}</select>
<button type="submit">Show jobs</button>
</form>`
}

/** "Newest jobs" (back to the first page) and "Older jobs" (the next page), each with the filters. */
function pager(query: JobsQuery, nextCursor: string | null): Html | '' {
  const links = [
    query.cursor &&
      html`<a href="/console/jobs${jobsQueryString({ ...query, cursor: undefined })}">Newest jobs</a>`,
    nextCursor &&
      html`<a href="/console/jobs${jobsQueryString({ ...query, cursor: nextCursor })}">Older jobs</a>`,
  ].filter((link) => link instanceof Html)
  return links.length > 0 ? html`<nav class="pager" aria-label="Pages of jobs">${links}</nav>` : ''
}

/**
 * The body of the jobs page: the filters, then a page of jobs as a table (the job's link first, so that it is
 * in sight at phone width), or what to do when there is none. `page` is undefined when the query was refused.
 */
export function jobsListBody(
  printers: Printer[],
  query: JobsQuery,
  page: PageOf<PrintJob> | undefined,
): Html {
  const names = new Map(printers.map((p) => [p.printer_id, p.name]))
  const filtered = Boolean(query.status || query.printer_id)
  const row = (job: PrintJob) => {
    const name = names.get(job.printer_id)
    return html`<tr>
<td><a href="/console/jobs/${job.print_job_id}">Job <span class="mono">${shortId(job.print_job_id)}</span></a></td>
<td>${timeElement(job.created_at, { zone: false })}</td>
<td>${name === undefined ? html`<span class="muted">Removed printer ${shortId(job.printer_id)}</span>` : name}</td>
<td>${statusBadge(job)}</td>
<td>${documentWords(job)}</td>
</tr>`
  }
  let results: Html
  if (!page) results = html`<p><a href="/console/jobs">Show the newest jobs</a></p>`
  else if (page.data.length === 0)
    results = html`<p>${filtered || query.cursor ? 'No jobs match these filters.' : 'No print jobs yet.'}</p>`
  else
    results = html`<div class="table-wrap"><table>
<caption class="muted">Newest first</caption>
<thead><tr><th scope="col">Job</th><th scope="col">Created (UTC)</th><th scope="col">Printer</th><th scope="col">Status</th><th scope="col">Document</th></tr></thead>
<tbody>${page.data.map(row)}</tbody>
</table></div>
${pager(query, page.next_cursor)}`
  return html`<h1>Jobs</h1>
${filterForm(printers, query)}
<h2>${filtered ? 'Matching jobs' : 'All jobs'}</h2>
${results}`
}
