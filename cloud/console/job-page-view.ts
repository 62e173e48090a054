import type { Printer } from '../../protocol/printer.ts'
import type { PrintJobDetails } from '../storage/print-jobs.ts'
import { documentWords, jobState, shortId, statusBadge, TIMELINE, timeElement } from './job-view.ts'
import { csrfField, type Html, html } from './layout.ts'

/**
 * The body of a job's page: its facts and timeline inside the element console.js follows while the job is in
 * flight (`data-job-state`, each changing text marked `data-job-field`), and the cancel form while the API's
 * cancel may take the job. `printer` is undefined for a removed printer.
 */
export function jobPageBody(job: PrintJobDetails, printer: Printer | undefined, csrfToken: string): Html {
  const state = jobState(job)
  const id = job.print_job_id
  const field = (name: keyof typeof state.text) => html`<dd data-job-field="${name}">${state.text[name]}</dd>`
  const printerLink = printer
    ? html`<a href="/console/printers/${printer.printer_id}">${printer.name}</a>`
    : html`Removed printer <span class="mono">${shortId(job.printer_id)}</span>`
  const cancelForm = state.cancellable
    ? html`<form class="inline" method="post" action="/console/jobs/${id}/cancel" data-job-cancel>${csrfField(csrfToken)}<button type="submit" class="danger">Cancel this job</button></form>`
    : ''
  return html`<h1>Print job <span class="mono">${shortId(id)}</span></h1>
<div data-job-state="/console/jobs/${id}/state" data-job-final="${String(state.final)}">
<dl class="facts">
<dt>Status</dt><dd aria-live="polite">${statusBadge(job, 'status')}</dd>
<dt>Waiting</dt>${field('waiting')}
<dt>Failure reason</dt>${field('failure')}
<dt>Failure detail</dt>${field('failure_detail')}
<dt>Cancel requested</dt>${field('cancel')}
<dt>Printer</dt><dd>${printerLink}</dd>
<dt>Document</dt><dd>${documentWords(job)} <span class="muted">(${job.document_mime_type})</span></dd>
<dt>Copies</dt><dd>${job.copies}</dd>
<dt>Intent</dt><dd>${job.intent}</dd>
<dt>Job id</dt><dd><code>${id}</code></dd>
</dl>
<h2>Timeline</h2>
<ol class="timeline">${TIMELINE.map(([name, label]) => html`<li>${label}: ${timeElement(state.times[name], { field: name })}</li>`)}</ol>
</div>
${cancelForm}
<p><a href="/console/jobs">All jobs</a></p>`
}
