import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify'
import { isApiError } from '../../print-api/api-error.ts'
import type { Printer } from '../../protocol/printer.ts'
import type { JobPrinter } from '../storage/printers.ts'
import { isUuid } from '../uuid.ts'
import type { ConsoleOptions } from './console-context.ts'
import { field } from './form-fields.ts'
import { requireUser, userOf } from './guards.ts'
import { shortId, timeElement } from './job-view.ts'
import { csrfField, type Html, html, type PageParts } from './layout.ts'
import { formatWords, healthBadge, languageWords, mmRangeWords, onlineBadge } from './printer-view.ts'
import { type SectionPageParts, sendNotFound, sendSectionPage } from './section-page.ts'
import { testPageFor } from './test-page.ts'

/** Printers per page of the list. */
const PAGE_SIZE = 50

const yesNo = (value: boolean) => (value ? 'Yes' : 'No')

/**
 * The Printers pages of the console (docs/console.md): the account's printers with their state; one printer's
 * capabilities and health, and a test page printed as a real job through the API's document intake and
 * submitter.
 */
export const printersPages: FastifyPluginAsync<ConsoleOptions> = async (
  app,
  { storage, submitter, intake, clock },
) => {
  const send = (request: FastifyRequest, reply: FastifyReply, status: number, parts: SectionPageParts) =>
    sendSectionPage(request, reply, 'printers', status, parts)
  const notFound = (request: FastifyRequest, reply: FastifyReply) =>
    sendNotFound(request, reply, 'printers', {
      name: 'Printer',
      listPath: '/console/printers',
      listLabel: 'All printers',
    })
  /** The account's printer named by the route's :id (removed ones are not); undefined for anything else. */
  const printerOf = async (request: FastifyRequest): Promise<JobPrinter | undefined> => {
    const id = field(request.params, 'id')
    if (!isUuid(id)) return undefined
    return storage.printers.findForJob(userOf(request).accountId, id)
  }
  /** The name of each of the account's hubs, by id. */
  const hubNames = async (accountId: string) =>
    new Map((await storage.agents.listUnrevoked(accountId)).map((hub) => [hub.agent_id, hub.name]))
  const hubWords = (names: Map<string, string>, agentId: string) =>
    names.get(agentId) ?? html`<span class="muted">Revoked hub ${shortId(agentId)}</span>`

  app.get('/printers', { schema: { hide: true }, preHandler: requireUser }, async (request, reply) => {
    const { accountId } = userOf(request)
    const cursor = field(request.query, 'cursor')
    const page =
      cursor === '' || isUuid(cursor)
        ? await storage.printers.list(accountId, PAGE_SIZE, cursor || undefined)
        : undefined
    if (!page) {
      return send(request, reply, 400, {
        title: 'Printers',
        notice: { kind: 'error', text: 'That page link does not name a printer of this list.' },
        body: html`<h1>Printers</h1>
<p><a href="/console/printers">Show the printers from the start</a></p>`,
      })
    }
    const hubs = await hubNames(accountId)
    const row = (p: Printer) => html`<tr>
<th scope="row"><a href="/console/printers/${p.printer_id}">${p.name}</a></th>
<td>${hubWords(hubs, p.agent_id)}</td>
<td>${onlineBadge(p)}</td>
<td>${healthBadge(p)}</td>
<td>${languageWords(p.languages)}</td>
<td>${formatWords(p.capabilities)}</td>
</tr>`
    const more = page.next_cursor
      ? html`<nav class="pager" aria-label="Pages of printers">${cursor ? html`<a href="/console/printers">First printers</a>` : ''}<a href="/console/printers?cursor=${page.next_cursor}">More printers</a></nav>`
      : cursor
        ? html`<nav class="pager" aria-label="Pages of printers"><a href="/console/printers">First printers</a></nav>`
        : ''
    const body =
      page.data.length === 0
        ? html`<h1>Printers</h1>
<p>No printers yet. A hub reports the printers it finds once it is online: <a href="/console/hubs">add a hub</a>.</p>`
        : html`<h1>Printers</h1>
<div class="table-wrap"><table>
<caption class="muted">Newest first, as their hubs report them</caption>
<thead><tr><th scope="col">Printer</th><th scope="col">Hub</th><th scope="col">Connection</th><th scope="col">Health</th><th scope="col">Languages</th><th scope="col">Formats</th></tr></thead>
<tbody>${page.data.map(row)}</tbody>
</table></div>
${more}`
    return send(request, reply, 200, { title: 'Printers', body })
  })

  const detailPage = async (
    request: FastifyRequest,
    reply: FastifyReply,
    printer: Printer,
    status: number,
    notice?: PageParts['notice'],
  ) => {
    const hubs = await hubNames(userOf(request).accountId)
    const c = printer.capabilities
    const health = printer.health
    const testPage = testPageFor(printer, new Date(clock.now()))
    const action: Html = testPage
      ? html`<form class="inline" method="post" action="/console/printers/${printer.printer_id}/test-page">${csrfField(reply.generateCsrf())}<button type="submit">Print test page</button></form>
<p class="muted">A short ${testPage.format === 'pdf' ? 'one-page PDF' : `${languageWords(testPage.rawLanguage ? [testPage.rawLanguage] : [])} slip`} with the printer's name and the time, sent as a print job like any other.</p>${
          printer.online
            ? ''
            : html`
<p>The printer is offline: a test page waits as pending until its hub reports it again, or until the job expires.</p>`
        }`
      : html`<p>This printer takes no document the console can make a test page in.</p>`
    return send(request, reply, status, {
      title: printer.name,
      ...(notice && { notice }),
      body: html`<h1>${printer.name}</h1>
<dl class="facts">
<dt>Connection</dt><dd>${onlineBadge(printer)}</dd>
<dt>Health</dt><dd>${healthBadge(printer)}${health && health.reasons.length > 0 ? html` <span class="muted">(${health.reasons.join(', ')})</span>` : ''}</dd>
<dt>Health checked</dt><dd>${timeElement(health?.checked_at ?? null)}</dd>
<dt>Last seen</dt><dd>${timeElement(printer.last_seen_at)}</dd>
<dt>Hub</dt><dd>${hubWords(hubs, printer.agent_id)}</dd>
<dt>Printer id</dt><dd><code>${printer.printer_id}</code></dd>
</dl>
<h2>Capabilities</h2>
<dl class="facts">
<dt>Document formats</dt><dd>${formatWords(c)}</dd>
<dt>Raw languages</dt><dd>${languageWords(c.raw_languages)}</dd>
<dt>Resolutions</dt><dd>${c.dpi.length === 0 ? 'Not reported' : c.dpi.map((d) => `${d} dpi`).join(', ')}</dd>
<dt>Media width</dt><dd>${mmRangeWords(c.media_width_mm)}</dd>
<dt>Media length</dt><dd>${mmRangeWords(c.media_height_mm)}</dd>
<dt>Colour</dt><dd>${yesNo(c.color)}</dd>
<dt>Duplex</dt><dd>${yesNo(c.duplex)}</dd>
</dl>
<h2>Test page</h2>
${action}
<p><a href="/console/jobs?printer_id=${printer.printer_id}">This printer's jobs</a> · <a href="/console/printers">All printers</a></p>`,
    })
  }

  app.get('/printers/:id', { schema: { hide: true }, preHandler: requireUser }, async (request, reply) => {
    const printer = await printerOf(request)
    if (!printer) return notFound(request, reply)
    return detailPage(request, reply, printer, 200)
  })

  // A real job through the API's intake and submitter: the same checks (route, storage quota, queue capacity),
  // its hub told of it, then the job's page, which follows it to printed.
  app.post(
    '/printers/:id/test-page',
    { schema: { hide: true }, preValidation: app.csrfProtection, preHandler: requireUser },
    async (request, reply) => {
      const printer = await printerOf(request)
      if (!printer) return notFound(request, reply)
      const { accountId } = userOf(request)
      const testPage = testPageFor(printer, new Date(clock.now()))
      if (!testPage) {
        return detailPage(request, reply, printer, 409, {
          kind: 'error',
          text: 'This printer takes no document the console can make a test page in.',
        })
      }
      try {
        const document = await intake.ingest(accountId, testPage.bytes, {
          format: testPage.format,
          rawLanguage: testPage.rawLanguage,
          filename: testPage.filename,
        })
        const job = await submitter.submit(accountId, printer, document, {}, request.log)
        return reply.redirect(`/console/jobs/${job.print_job_id}`, 303)
      } catch (error) {
        // The API's refusal (queue full, storage quota, a printer that changed): its code and message.
        if (!isApiError(error)) throw error
        return detailPage(request, reply, printer, error.status, {
          kind: 'error',
          text: `${error.code}: ${error.message}`,
        })
      }
    },
  )
}
