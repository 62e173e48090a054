import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify'
import { PRINT_JOB_STATUSES, type PrintJobStatus } from '../../protocol/enums.ts'
import type { PrintJob } from '../../protocol/print-job.ts'
import type { Printer } from '../../protocol/printer.ts'
import { isApiError } from '../errors.ts'
import { cancelPrintJob, notCancellable } from '../print-jobs/cancel.ts'
import { JobLifecycle } from '../print-jobs/lifecycle.ts'
import type { PrintJobDetails } from '../storage/print-jobs.ts'
import type { Storage } from '../storage/storage.ts'
import type { ConsoleOptions } from './console-context.ts'
import { requireUser, userOf } from './guards.ts'
import {
  documentWords,
  isCancellable,
  jobState,
  STATUS_WORDS,
  shortId,
  statusBadge,
  TIMELINE,
  timeElement,
} from './job-view.ts'
import { isUuid, type JobsQuery, jobsQueryString, parseJobsQuery, STALE_PAGE } from './jobs-query.ts'
import { csrfField, Html, html, type PageParts } from './layout.ts'
import { type SectionPageParts, sendNotFound, sendSectionPage } from './section-page.ts'

/** Jobs per page of the list. */
const PAGE_SIZE = 25

/** The notices after a cancel (Post/Redirect/Get): fixed words for each outcome of the API's cancel. */
const CANCEL_NOTICES = {
  cancelled: { kind: 'ok', text: 'The job is cancelled: none of it reached the printer.' },
  requested: {
    kind: 'ok',
    text:
      'Cancel requested: the job’s hub has not confirmed it yet. The job ends cancelled if the hub drops it, ' +
      'or printed or failed if it had already started. This page follows it.',
  },
} as const

/** The notice of `?cancel=` after a cancel; a refusal names the API's error code and message. */
function cancelNotice(cancel: unknown, status: PrintJobStatus): PageParts['notice'] {
  if (cancel === 'cancelled' || cancel === 'requested') return CANCEL_NOTICES[cancel]
  // A refusal is only told of a job that cannot be cancelled (a hand-made link changes nothing).
  if (cancel !== 'refused' || isCancellable(status)) return undefined
  const refusal = notCancellable(status)
  return { kind: 'error', text: `${refusal.code}: ${refusal.message}` }
}

/** Every printer of the account (the API's list, page by page), for names and the filter. */
async function accountPrinters(storage: Storage, accountId: string): Promise<Printer[]> {
  const printers: Printer[] = []
  let cursor: string | undefined
  do {
    const page = await storage.printers.list(accountId, 100, cursor)
    if (!page) break
    printers.push(...page.data)
    cursor = page.next_cursor ?? undefined
  } while (cursor)
  return printers
}

/**
 * The Jobs pages of the console (docs/console.md): the account's jobs, newest first, filtered by status and
 * printer; a job's facts and timeline, followed live while it is in flight; cancel as the API's cancel does.
 */
export const jobsPages: FastifyPluginAsync<ConsoleOptions> = async (app, { storage, jobEvents }) => {
  const lifecycle = new JobLifecycle(storage.printJobs, app.log)
  const send = (request: FastifyRequest, reply: FastifyReply, status: number, parts: SectionPageParts) =>
    sendSectionPage(request, reply, 'jobs', status, parts)
  const notFound = (request: FastifyRequest, reply: FastifyReply) =>
    sendNotFound(request, reply, 'jobs', { name: 'Job', listPath: '/console/jobs', listLabel: 'All jobs' })
  /** The account's job named by the route's :id; undefined (a 404 page sent) for anything else. */
  const jobOf = async (request: FastifyRequest): Promise<PrintJobDetails | undefined> => {
    const { id } = request.params as { id: string }
    if (!isUuid(id)) return undefined
    return storage.printJobs.findDetails(userOf(request).accountId, id)
  }

  app.get('/jobs', { schema: { hide: true }, preHandler: requireUser }, async (request, reply) => {
    const { accountId } = userOf(request)
    const printers = await accountPrinters(storage, accountId)
    const parsed = parseJobsQuery(request.query)
    if (!parsed.ok) return listPage(request, reply, printers, {}, undefined, parsed.problem)
    const { cursor, ...filter } = parsed.query
    const page = await storage.printJobs.list(accountId, PAGE_SIZE, cursor, filter)
    if (!page) return listPage(request, reply, printers, filter, undefined, STALE_PAGE)
    return listPage(request, reply, printers, parsed.query, page)
  })

  const listPage = (
    request: FastifyRequest,
    reply: FastifyReply,
    printers: Printer[],
    query: JobsQuery,
    page: { data: PrintJob[]; next_cursor: string | null } | undefined,
    problem?: string,
  ) => {
    const names = new Map(printers.map((p) => [p.printer_id, p.name]))
    const filtered = Boolean(query.status || query.printer_id)
    const printerOptions = printers.map((p) => ({ value: p.printer_id, label: p.name }))
    // A printer that is no longer listed (removed) can still be filtered by; it is named by its id.
    if (query.printer_id && !names.has(query.printer_id))
      printerOptions.push({ value: query.printer_id, label: `Printer ${shortId(query.printer_id)}` })
    const option = (value: string, label: string, selected: string | undefined) =>
      html`<option value="${value}"${value === (selected ?? '') ? html` selected` : ''}>${label}</option>`
    const filters = html`<form class="stack" method="get" action="/console/jobs">
<label for="job-status">Status</label>
<select id="job-status" name="status">${option('', 'Any status', query.status)}${PRINT_JOB_STATUSES.map((s) => option(s, STATUS_WORDS[s], query.status))}</select>
<label for="job-printer">Printer</label>
<select id="job-printer" name="printer_id">${option('', 'Any printer', query.printer_id)}${printerOptions.map((p) => option(p.value, p.label, query.printer_id))}</select>
<button type="submit">Show jobs</button>
</form>`
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
    const pagerLinks = page
      ? [
          query.cursor &&
            html`<a href="/console/jobs${jobsQueryString({ ...query, cursor: undefined })}">Newest jobs</a>`,
          page.next_cursor &&
            html`<a href="/console/jobs${jobsQueryString({ ...query, cursor: page.next_cursor })}">Older jobs</a>`,
        ].filter((link) => link instanceof Html)
      : []
    const pager =
      pagerLinks.length > 0 ? html`<nav class="pager" aria-label="Pages of jobs">${pagerLinks}</nav>` : ''
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
${pager}`
    return send(request, reply, problem ? 400 : 200, {
      title: 'Jobs',
      ...(problem && { notice: { kind: 'error', text: problem } }),
      body: html`<h1>Jobs</h1>
${filters}
<h2>${filtered ? 'Matching jobs' : 'All jobs'}</h2>
${results}`,
    })
  }

  app.get('/jobs/:id', { schema: { hide: true }, preHandler: requireUser }, async (request, reply) => {
    const job = await jobOf(request)
    if (!job) return notFound(request, reply)
    const printer = await storage.printers.findById(userOf(request).accountId, job.printer_id)
    const state = jobState(job)
    const notice = cancelNotice((request.query as { cancel?: unknown }).cancel, job.status)
    const field = (name: keyof typeof state.text) =>
      html`<dd data-job-field="${name}">${state.text[name]}</dd>`
    const id = job.print_job_id
    return send(request, reply, 200, {
      title: `Job ${shortId(id)}`,
      ...(notice && { notice }),
      body: html`<h1>Print job <span class="mono">${shortId(id)}</span></h1>
<div data-job-state="/console/jobs/${id}/state" data-job-final="${String(state.final)}">
<dl class="facts">
<dt>Status</dt><dd aria-live="polite">${statusBadge(job, 'status')}</dd>
<dt>Waiting</dt>${field('waiting')}
<dt>Failure reason</dt>${field('failure')}
<dt>Failure detail</dt>${field('failure_detail')}
<dt>Cancel requested</dt>${field('cancel')}
<dt>Printer</dt><dd>${printer ? html`<a href="/console/printers/${printer.printer_id}">${printer.name}</a>` : html`Removed printer <span class="mono">${shortId(job.printer_id)}</span>`}</dd>
<dt>Document</dt><dd>${documentWords(job)} <span class="muted">(${job.document_mime_type})</span></dd>
<dt>Copies</dt><dd>${job.copies}</dd>
<dt>Intent</dt><dd>${job.intent}</dd>
<dt>Job id</dt><dd><code>${id}</code></dd>
</dl>
<h2>Timeline</h2>
<ol class="timeline">${TIMELINE.map(([name, label]) => html`<li>${label}: ${timeElement(state.times[name], { field: name })}</li>`)}</ol>
</div>
${
  state.cancellable
    ? html`<form class="inline" method="post" action="/console/jobs/${id}/cancel" data-job-cancel>${csrfField(reply.generateCsrf())}<button type="submit" class="danger">Cancel this job</button></form>`
    : ''
}
<p><a href="/console/jobs">All jobs</a></p>`,
    })
  })

  app.get('/jobs/:id/state', { schema: { hide: true }, preHandler: requireUser }, async (request, reply) => {
    const job = await jobOf(request)
    reply.header('cache-control', 'no-store')
    if (!job)
      return reply.code(404).send({ error_code: 'print_job_not_found', message: 'No such print job.' })
    return jobState(job)
  })

  app.post(
    '/jobs/:id/cancel',
    { schema: { hide: true }, onRequest: app.csrfProtection, preHandler: requireUser },
    async (request, reply) => {
      const { id } = request.params as { id: string }
      if (!isUuid(id)) return notFound(request, reply)
      try {
        const { outcome } = await cancelPrintJob(
          { jobs: storage.printJobs, lifecycle, jobEvents },
          userOf(request).accountId,
          id,
          request.log,
        )
        return reply.redirect(`/console/jobs/${id}?cancel=${outcome}`, 303)
      } catch (error) {
        if (isApiError(error) && error.code === 'print_job_not_found') return notFound(request, reply)
        if (isApiError(error) && error.code === 'print_job_not_cancellable')
          return reply.redirect(`/console/jobs/${id}?cancel=refused`, 303)
        throw error
      }
    },
  )
}
