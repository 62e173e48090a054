import type { FastifyPluginAsync } from 'fastify'
import type { Agent } from '../../protocol/agent.ts'
import { PRINT_JOB_STATUSES, type PrintJobStatus } from '../../protocol/enums.ts'
import type { Printer } from '../../protocol/printer.ts'
import { accountPrinters } from './account-printers.ts'
import type { ConsoleOptions } from './console-context.ts'
import { requireUser, userOf } from './guards.ts'
import { printerCountWords, printersByHub, versionWords } from './hub-view.ts'
import { STATUS_WORDS, timeElement } from './job-view.ts'
import { type Html, html } from './layout.ts'
import { healthBadge, onlineBadge } from './printer-view.ts'
import { sendSectionPage } from './section-page.ts'

/** The period the Overview counts jobs over. */
const JOBS_PERIOD_MS = 24 * 3600_000

/** A printer's health with the reasons it reported (such as `paper_near_end`), if any. */
const healthCell = (printer: Printer): Html =>
  html`${healthBadge(printer)}${
    printer.health && printer.health.reasons.length > 0
      ? html` <span class="muted">(${printer.health.reasons.join(', ')})</span>`
      : ''
  }`

function hubSection(hub: Agent, printers: readonly Printer[]): Html {
  const heading = `hub-${hub.agent_id}`
  const table =
    printers.length === 0
      ? html`<p class="muted">This hub reports no printers yet.</p>`
      : html`<div class="table-wrap"><table>
<thead><tr><th scope="col">Printer</th><th scope="col">Online</th><th scope="col">Health</th><th scope="col">Last seen</th></tr></thead>
<tbody>${printers.map(
          (p) => html`<tr>
<th scope="row"><a href="/console/printers/${p.printer_id}">${p.name}</a></th>
<td>${onlineBadge(p)}</td>
<td>${healthCell(p)}</td>
<td>${timeElement(p.last_seen_at)}</td>
</tr>`,
        )}</tbody>
</table></div>`
  return html`<section aria-labelledby="${heading}">
<h3 id="${heading}"><a href="/console/hubs/${hub.agent_id}">${hub.name}</a></h3>
<dl class="facts">
<dt>Hub</dt><dd>${onlineBadge(hub)}</dd>
<dt>Last seen</dt><dd>${timeElement(hub.last_seen_at)}</dd>
<dt>Version</dt><dd>${versionWords(hub)}</dd>
<dt>Printers</dt><dd>${printerCountWords(printers.length)}</dd>
</dl>
${table}
</section>`
}

function jobsTable(counts: Record<PrintJobStatus, number>): Html {
  const total = PRINT_JOB_STATUSES.reduce((sum, status) => sum + counts[status], 0)
  if (total === 0) return html`<p>No print jobs in the last 24 hours.</p>`
  return html`<div class="table-wrap"><table class="counts">
<thead><tr><th scope="col">Status</th><th scope="col">Jobs</th></tr></thead>
<tbody>${PRINT_JOB_STATUSES.map(
    (status) => html`<tr><th scope="row">${STATUS_WORDS[status]}</th><td>${counts[status]}</td></tr>`,
  )}</tbody>
<tfoot><tr><th scope="row">All</th><td>${total}</td></tr></tfoot>
</table></div>
<p><a href="/console/jobs">See the jobs</a></p>`
}

/**
 * The Overview page, GET /console (docs/console.md): the account's hubs with their printers, online state,
 * health, last seen and version, and its jobs of the last 24 hours counted by status.
 */
export const overviewPage: FastifyPluginAsync<ConsoleOptions> = async (app, { storage, clock }) => {
  app.get('/', { schema: { hide: true }, preHandler: requireUser }, async (request, reply) => {
    const { accountId } = userOf(request)
    const since = new Date(clock.now() - JOBS_PERIOD_MS).toISOString()
    const [hubs, printers, counts] = await Promise.all([
      storage.agents.listUnrevoked(accountId),
      accountPrinters(storage, accountId),
      storage.printJobs.countByStatusSince(accountId, since),
    ])
    const byHub = printersByHub(printers)
    const hubsPart =
      hubs.length === 0
        ? html`<p>This account has no hubs yet. A hub is the small computer beside your printers that connects them to this service.</p>
<p><a class="button" href="/console/hubs#add-hub">Add a hub</a></p>`
        : hubs.map((hub) => hubSection(hub, byHub.get(hub.agent_id) ?? []))
    return sendSectionPage(request, reply, 'overview', 200, {
      title: 'Overview',
      body: html`<h1>Overview</h1>
<h2>Hubs and printers</h2>
${hubsPart}
<h2>Jobs in the last 24 hours</h2>
${jobsTable(counts)}`,
    })
  })
}
