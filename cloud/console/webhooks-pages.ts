import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify'
import { type ApiError, isApiError } from '../../print-api/api-error.ts'
import {
  WEBHOOK_EVENT_TYPES,
  WEBHOOK_LIMITS,
  type WebhookAttempt,
  type WebhookDelivery,
  type WebhookEndpoint,
  type WebhookEndpointWithSecret,
  type WebhookEventType,
} from '../../protocol/webhooks.ts'
import { isUuid } from '../uuid.ts'
import type { ConsoleOptions } from './console-context.ts'
import { field } from './form-fields.ts'
import { requireOwner, userOf } from './guards.ts'
import { timeElement } from './job-view.ts'
import { csrfField, type Html, html, type PageParts } from './layout.ts'
import { type SectionPageParts, sendNotFound, sendSectionPage } from './section-page.ts'

type Notice = NonNullable<PageParts['notice']>

/** How many of an endpoint's newest deliveries its page shows, each with its attempts. */
const RECENT_DELIVERIES = 20

/** What each event type means, for the checkboxes. */
const EVENT_WORDS: Record<WebhookEventType, string> = {
  'print_job.pending': 'a job is created, or handed back to wait again',
  'print_job.reserved': 'a hub took a job',
  'print_job.printing': 'a job started printing',
  'print_job.printed': 'a job printed',
  'print_job.failed': 'a job failed or expired',
  'print_job.cancelled': 'a job was cancelled',
  'printer.online': 'a printer came online',
  'printer.offline': 'a printer went offline',
  'printer.health_changed': "a printer's health changed (paper out, cover open…)",
  'agent.online': 'a hub came online',
  'agent.offline': 'a hub went offline',
}

/** Fixed notices after a redirect (never text from the query). */
const DONE_NOTICES: Record<string, Notice> = {
  saved: { kind: 'ok', text: 'The endpoint is saved.' },
  paused: { kind: 'ok', text: 'The endpoint is paused: nothing is sent to it until it is enabled.' },
  enabled: { kind: 'ok', text: 'The endpoint is enabled: deliveries to it start again.' },
  test: { kind: 'ok', text: 'A test event is on its way; its delivery is listed below.' },
  redelivered: { kind: 'ok', text: 'The delivery will be sent again at once.' },
  deleted: { kind: 'ok', text: 'The endpoint is deleted, with its deliveries.' },
}

interface EndpointForm {
  url: string
  description: string
  events: readonly string[]
}

/** The `event` checkboxes of a posted form: none, one (a string) or several (an array). */
function checkedEvents(body: unknown): string[] {
  const value =
    typeof body === 'object' && body !== null ? (body as Record<string, unknown>).event : undefined
  const values = Array.isArray(value) ? value : [value]
  return values.filter((v): v is string => typeof v === 'string')
}
const isEventType = (text: string): text is WebhookEventType =>
  (WEBHOOK_EVENT_TYPES as readonly string[]).includes(text)

/** The form's fields checked as the API checks its body; a refusal in words. */
function readForm(body: unknown): { form: EndpointForm; error?: string } {
  const form = {
    url: field(body, 'url').trim(),
    description: field(body, 'description').trim(),
    events: checkedEvents(body),
  }
  if (form.url === '') return { form, error: 'Enter the URL of your endpoint.' }
  if (form.url.length > WEBHOOK_LIMITS.urlMaxLength)
    return { form, error: `The URL must be at most ${WEBHOOK_LIMITS.urlMaxLength} characters.` }
  if (form.events.length === 0) return { form, error: 'Choose at least one event.' }
  if (!form.events.every(isEventType)) return { form, error: 'Choose events from the list.' }
  if (form.description.length > WEBHOOK_LIMITS.descriptionMaxLength) {
    return {
      form,
      error: `The description must be at most ${WEBHOOK_LIMITS.descriptionMaxLength} characters.`,
    }
  }
  return { form }
}

/** An ApiError of the shared checks, in words for the page. */
function refusalWords(error: ApiError): string {
  const fields = error.details?.fields as { field: string; message: string }[] | undefined
  const url = fields?.find((f) => f.field === 'url')
  if (url) return `The URL ${url.message}.`
  return error.message
}

function stateBadge(endpoint: WebhookEndpoint): Html {
  if (endpoint.enabled) {
    return endpoint.failing_since
      ? html`<span class="badge warn">Failing</span>`
      : html`<span class="badge ok">Enabled</span>`
  }
  return endpoint.disabled_reason === 'failing'
    ? html`<span class="badge bad">Disabled</span>`
    : html`<span class="badge">Paused</span>`
}

/** Why an endpoint sends nothing, or is failing, in a sentence; empty when all is well. */
function stateWords(endpoint: WebhookEndpoint): Html | string {
  if (!endpoint.enabled && endpoint.disabled_reason === 'failing') {
    return html`Disabled ${timeElement(endpoint.disabled_at)}: every delivery failed since ${timeElement(endpoint.failing_since)}. Fix the endpoint, then enable it.`
  }
  if (!endpoint.enabled) return html`Paused ${timeElement(endpoint.disabled_at)} by an owner.`
  if (endpoint.failing_since) {
    return html`Every delivery has failed since ${timeElement(endpoint.failing_since)}; it will be disabled if this goes on.`
  }
  return ''
}

function endpointsTable(endpoints: WebhookEndpoint[]): Html {
  if (endpoints.length === 0) return html`<p>No webhook endpoints yet.</p>`
  return html`<div class="table-wrap"><table>
<caption class="muted">Oldest first. Signing secrets are never shown again after they are made.</caption>
<thead><tr><th scope="col">URL</th><th scope="col">State</th><th scope="col">Events</th><th scope="col">Description</th><th scope="col">Created</th></tr></thead>
<tbody>${endpoints.map(
    (e) => html`<tr>
<th scope="row"><a class="url" href="/console/webhooks/${e.webhook_endpoint_id}">${e.url}</a></th>
<td>${stateBadge(e)} ${stateWords(e)}</td>
<td>${e.event_types.join(', ')}</td>
<td>${e.description ?? html`<span class="muted">None</span>`}</td>
<td>${timeElement(e.created_at)}</td>
</tr>`,
  )}</tbody>
</table></div>`
}

function endpointFields(form: EndpointForm, prefix: string): Html {
  return html`<label for="${prefix}-url">URL</label>
<input type="url" id="${prefix}-url" name="url" required maxlength="${WEBHOOK_LIMITS.urlMaxLength}" autocomplete="off" value="${form.url}" aria-describedby="${prefix}-url-hint">
<p class="muted" id="${prefix}-url-hint">An https URL on the public internet; local and private addresses are refused.</p>
<label for="${prefix}-description">Description</label>
<input type="text" id="${prefix}-description" name="description" maxlength="${WEBHOOK_LIMITS.descriptionMaxLength}" autocomplete="off" value="${form.description}" aria-describedby="${prefix}-description-hint">
<p class="muted" id="${prefix}-description-hint">Optional: what receives them (up to ${WEBHOOK_LIMITS.descriptionMaxLength} characters).</p>
<fieldset>
<legend>Events to send</legend>
${WEBHOOK_EVENT_TYPES.map(
  (type) =>
    html`<label for="${prefix}-event-${type.replace('.', '-')}"><input type="checkbox" id="${prefix}-event-${type.replace('.', '-')}" name="event" value="${type}"${form.events.includes(type) ? html` checked` : ''}> <code>${type}</code>: ${EVENT_WORDS[type]}</label>`,
)}
</fieldset>`
}

function secretSection(endpoint: WebhookEndpointWithSecret, heading: string): Html {
  return html`<section aria-labelledby="secret-heading">
<h2 id="secret-heading">${heading}</h2>
<p class="warning" role="alert"><strong>Copy the signing secret now: it is shown only on this page and never again.</strong> Your endpoint checks each delivery's <code>webhook-signature</code> with it. If it is lost, rotate the secret.</p>
<dl class="facts">
<dt>Endpoint</dt><dd><a class="url" href="/console/webhooks/${endpoint.webhook_endpoint_id}">${endpoint.url}</a></dd>
<dt>Signing secret</dt><dd class="secret"><code id="new-webhook-secret">${endpoint.secret}</code> <button type="button" data-copy="new-webhook-secret" hidden>Copy secret</button></dd>
</dl>
</section>`
}

function attemptsList(attempts: WebhookAttempt[]): Html {
  if (attempts.length === 0) return html`<span class="muted">Not tried yet</span>`
  return html`<ol class="attempts">${attempts.map(
    (a) =>
      html`<li>${timeElement(a.attempted_at)}: ${a.status_code === null ? 'no answer' : html`HTTP ${a.status_code}`}, ${a.duration_ms} ms${a.error ? html` — ${a.error}` : ''}</li>`,
  )}</ol>`
}

const deliveryBadge = (d: WebhookDelivery): Html =>
  d.state === 'delivered'
    ? html`<span class="badge ok">Delivered</span>`
    : d.state === 'failed'
      ? html`<span class="badge bad">Failed</span>`
      : html`<span class="badge warn">Pending</span>`

/**
 * The Webhooks pages (owner-only, docs/console.md): the account's endpoints with their state and why one is
 * disabled; create one (its signing secret shown once, in the answer to the form); one endpoint's page to
 * change, pause or enable, rotate its secret (the new one shown once), send a test event or delete it, with its
 * recent deliveries, the attempts of each and a button to send one again. The same checks as the API
 * (cloud/webhooks/manage-endpoints.ts).
 */
export const webhooksPages: FastifyPluginAsync<ConsoleOptions> = async (app, { webhooks }) => {
  const send = (request: FastifyRequest, reply: FastifyReply, status: number, parts: SectionPageParts) =>
    sendSectionPage(request, reply, 'webhooks', status, parts)
  const notFound = (request: FastifyRequest, reply: FastifyReply, name = 'Webhook endpoint') =>
    sendNotFound(request, reply, 'webhooks', { name, listPath: '/console/webhooks', listLabel: 'Webhooks' })
  const post = { schema: { hide: true }, preValidation: app.csrfProtection, preHandler: requireOwner }
  const get = { schema: { hide: true }, preHandler: requireOwner }

  const listPage = async (
    request: FastifyRequest,
    reply: FastifyReply,
    status: number,
    parts: { notice?: Notice; created?: Html; form?: EndpointForm },
  ) => {
    const endpoints = await webhooks.list(userOf(request).accountId)
    const full = endpoints.length >= WEBHOOK_LIMITS.endpointsPerAccount
    return send(request, reply, status, {
      title: 'Webhooks',
      ...(parts.notice && { notice: parts.notice }),
      body: html`<h1>Webhooks</h1>
${parts.created ?? ''}
<p>A webhook endpoint is a URL of yours that the service calls when a job, printer or hub changes, instead of your system polling. Each delivery is signed with the endpoint's secret (Standard Webhooks) and retried for days until your endpoint answers 2xx; an endpoint that keeps failing is disabled.</p>
${endpointsTable(endpoints)}
<h2>Add an endpoint</h2>
${
  full
    ? html`<p>This account has ${WEBHOOK_LIMITS.endpointsPerAccount} endpoints, as many as it may; delete one to add another.</p>`
    : html`<form class="stack" method="post" action="/console/webhooks">
${csrfField(reply.generateCsrf())}
${endpointFields(parts.form ?? { url: '', description: '', events: [] }, 'new')}
<button type="submit">Add endpoint</button>
</form>`
}`,
    })
  }

  const endpointPage = async (
    request: FastifyRequest,
    reply: FastifyReply,
    status: number,
    endpoint: WebhookEndpoint,
    parts: { notice?: Notice; secret?: Html; form?: EndpointForm },
  ) => {
    const { accountId } = userOf(request)
    const id = endpoint.webhook_endpoint_id
    const page = await webhooks.deliveries(accountId, id, RECENT_DELIVERIES)
    const deliveries = page?.data ?? []
    const attempts = await Promise.all(
      deliveries.map((d) => webhooks.attempts(accountId, d.webhook_delivery_id)),
    )
    const csrf = reply.generateCsrf()
    const form = parts.form ?? {
      url: endpoint.url,
      description: endpoint.description ?? '',
      events: endpoint.event_types,
    }
    return send(request, reply, status, {
      title: `Webhook ${endpoint.url}`,
      ...(parts.notice && { notice: parts.notice }),
      body: html`<p><a href="/console/webhooks">Webhooks</a></p>
<h1 class="url">${endpoint.url}</h1>
${parts.secret ?? ''}
<dl class="facts">
<dt>State</dt><dd>${stateBadge(endpoint)} ${stateWords(endpoint)}</dd>
<dt>Events</dt><dd>${endpoint.event_types.join(', ')}</dd>
<dt>Description</dt><dd>${endpoint.description ?? html`<span class="muted">None</span>`}</dd>
<dt>Created</dt><dd>${timeElement(endpoint.created_at)}</dd>
<dt>Endpoint id</dt><dd><code>${id}</code></dd>
</dl>
<div class="actions">
<form class="inline" method="post" action="/console/webhooks/${id}/enabled">${csrfField(csrf)}<input type="hidden" name="enabled" value="${endpoint.enabled ? 'false' : 'true'}"><button type="submit">${endpoint.enabled ? 'Pause' : 'Enable'}</button></form>
<form class="inline" method="post" action="/console/webhooks/${id}/test">${csrfField(csrf)}<button type="submit"${endpoint.enabled ? '' : html` disabled`}>Send test event</button></form>
<form class="inline" method="post" action="/console/webhooks/${id}/rotate-secret">${csrfField(csrf)}<button type="submit">Rotate secret</button></form>
<a href="/console/webhooks/${id}/delete">Delete</a>
</div>
<p class="muted">Rotating makes a new secret, shown once; deliveries are also signed with the old one for 24 hours, so your endpoint can switch without missing one.</p>
<h2>Recent deliveries</h2>
${
  deliveries.length === 0
    ? html`<p>No deliveries yet.</p>`
    : html`<div class="table-wrap"><table>
<caption class="muted">The ${RECENT_DELIVERIES} newest, newest first, with every attempt.</caption>
<thead><tr><th scope="col">Event</th><th scope="col">State</th><th scope="col">Attempts</th><th scope="col">Created</th><th scope="col">Send again</th></tr></thead>
<tbody>${deliveries.map(
        (d, i) => html`<tr>
<th scope="row"><code>${d.event_type}</code></th>
<td>${deliveryBadge(d)}${d.state === 'pending' && d.next_attempt_at ? html` next ${timeElement(d.next_attempt_at)}` : ''}</td>
<td>${attemptsList(attempts[i] ?? [])}</td>
<td>${timeElement(d.created_at)}</td>
<td><form class="inline" method="post" action="/console/webhooks/${id}/deliveries/${d.webhook_delivery_id}/redeliver">${csrfField(csrf)}<button type="submit"${endpoint.enabled ? '' : html` disabled`} aria-label="Send ${d.event_type} of ${d.created_at} again">Send again</button></form></td>
</tr>`,
      )}</tbody>
</table></div>`
}
<h2>Change</h2>
<form class="stack" method="post" action="/console/webhooks/${id}">
${csrfField(csrf)}
${endpointFields(form, 'edit')}
<button type="submit">Save changes</button>
</form>`,
    })
  }

  /** The account's endpoint named by the route's :id; undefined for another account's, unknown or malformed. */
  const endpointOf = async (request: FastifyRequest): Promise<WebhookEndpoint | undefined> => {
    const id = field(request.params, 'id')
    if (!isUuid(id)) return undefined
    try {
      return await webhooks.get(userOf(request).accountId, id)
    } catch (error) {
      if (isApiError(error) && error.code === 'webhook_endpoint_not_found') return undefined
      throw error
    }
  }

  app.get('/webhooks', get, async (request, reply) => {
    const notice = DONE_NOTICES[field(request.query, 'done')]
    return listPage(request, reply, 200, notice ? { notice } : {})
  })

  // The secret is shown in this answer (no-store, like every console page) rather than after a redirect: it is
  // kept nowhere to be shown again, so a reload re-posts the form and makes another endpoint, never re-shows it.
  app.post('/webhooks', post, async (request, reply) => {
    const { form, error } = readForm(request.body)
    const refuse = (status: number, text: string) =>
      listPage(request, reply, status, { notice: { kind: 'error', text }, form })
    if (error) return refuse(422, error)
    try {
      const created = await webhooks.create(userOf(request).accountId, {
        url: form.url,
        event_types: form.events as WebhookEventType[],
        ...(form.description !== '' && { description: form.description }),
      })
      request.log.info(
        { webhook_endpoint_id: created.webhook_endpoint_id },
        'webhook endpoint created in the console',
      )
      return listPage(request, reply, 201, {
        notice: { kind: 'ok', text: 'Webhook endpoint added.' },
        created: secretSection(created, 'Signing secret of the new endpoint'),
      })
    } catch (caught) {
      if (!isApiError(caught)) throw caught
      return refuse(caught.status, refusalWords(caught))
    }
  })

  app.get('/webhooks/:id', get, async (request, reply) => {
    const endpoint = await endpointOf(request)
    if (!endpoint) return notFound(request, reply)
    const notice = DONE_NOTICES[field(request.query, 'done')]
    return endpointPage(request, reply, 200, endpoint, notice ? { notice } : {})
  })

  app.post('/webhooks/:id', post, async (request, reply) => {
    const endpoint = await endpointOf(request)
    if (!endpoint) return notFound(request, reply)
    const { form, error } = readForm(request.body)
    const refuse = (status: number, text: string) =>
      endpointPage(request, reply, status, endpoint, { notice: { kind: 'error', text }, form })
    if (error) return refuse(422, error)
    try {
      await webhooks.update(userOf(request).accountId, endpoint.webhook_endpoint_id, {
        url: form.url,
        event_types: form.events as WebhookEventType[],
        description: form.description === '' ? null : form.description,
      })
    } catch (caught) {
      if (!isApiError(caught)) throw caught
      if (caught.code === 'webhook_endpoint_not_found') return notFound(request, reply)
      return refuse(caught.status, refusalWords(caught))
    }
    return reply.redirect(`/console/webhooks/${endpoint.webhook_endpoint_id}?done=saved`, 303)
  })

  app.post('/webhooks/:id/enabled', post, async (request, reply) => {
    const endpoint = await endpointOf(request)
    if (!endpoint) return notFound(request, reply)
    const enabled = field(request.body, 'enabled') === 'true'
    await webhooks.update(userOf(request).accountId, endpoint.webhook_endpoint_id, { enabled })
    const done = enabled ? 'enabled' : 'paused'
    return reply.redirect(`/console/webhooks/${endpoint.webhook_endpoint_id}?done=${done}`, 303)
  })

  // As on create: the new secret is in this answer only.
  app.post('/webhooks/:id/rotate-secret', post, async (request, reply) => {
    const endpoint = await endpointOf(request)
    if (!endpoint) return notFound(request, reply)
    const rotated = await webhooks.rotate(userOf(request).accountId, endpoint.webhook_endpoint_id, {})
    request.log.info(
      { webhook_endpoint_id: rotated.webhook_endpoint_id },
      'webhook secret rotated in the console',
    )
    const { secret: _secret, ...shown } = rotated
    return endpointPage(request, reply, 200, shown, {
      notice: { kind: 'ok', text: 'The signing secret is rotated.' },
      secret: secretSection(rotated, 'New signing secret'),
    })
  })

  app.post('/webhooks/:id/test', post, async (request, reply) => {
    const endpoint = await endpointOf(request)
    if (!endpoint) return notFound(request, reply)
    try {
      await webhooks.sendTest(userOf(request).accountId, endpoint.webhook_endpoint_id)
    } catch (caught) {
      if (!isApiError(caught) || caught.code !== 'webhook_endpoint_disabled') throw caught
      return endpointPage(request, reply, 409, endpoint, { notice: { kind: 'error', text: caught.message } })
    }
    return reply.redirect(`/console/webhooks/${endpoint.webhook_endpoint_id}?done=test`, 303)
  })

  app.post('/webhooks/:id/deliveries/:deliveryId/redeliver', post, async (request, reply) => {
    const endpoint = await endpointOf(request)
    const deliveryId = field(request.params, 'deliveryId')
    if (!endpoint || !isUuid(deliveryId)) return notFound(request, reply)
    const { accountId } = userOf(request)
    // Only a delivery of this endpoint: the path says which endpoint the button was on.
    const delivery = await webhooks.findDelivery(accountId, deliveryId)
    if (delivery?.webhook_endpoint_id !== endpoint.webhook_endpoint_id) {
      return notFound(request, reply, 'Webhook delivery')
    }
    try {
      await webhooks.redeliver(accountId, deliveryId)
    } catch (caught) {
      if (!isApiError(caught) || caught.code !== 'webhook_endpoint_disabled') throw caught
      return endpointPage(request, reply, 409, endpoint, { notice: { kind: 'error', text: caught.message } })
    }
    return reply.redirect(`/console/webhooks/${endpoint.webhook_endpoint_id}?done=redelivered`, 303)
  })

  app.get('/webhooks/:id/delete', get, async (request, reply) => {
    const endpoint = await endpointOf(request)
    if (!endpoint) return notFound(request, reply)
    return send(request, reply, 200, {
      title: 'Delete webhook endpoint',
      body: html`<h1 class="url">Delete the endpoint ${endpoint.url}?</h1>
<p class="warning">Nothing more is sent to it, and its deliveries and their attempts are deleted with it. This cannot be undone; to stop deliveries for a while, pause it instead.</p>
<form class="inline" method="post" action="/console/webhooks/${endpoint.webhook_endpoint_id}/delete">${csrfField(reply.generateCsrf())}<button type="submit" class="danger">Delete it</button></form>
<p><a href="/console/webhooks/${endpoint.webhook_endpoint_id}">Keep it and go back</a></p>`,
    })
  })

  app.post('/webhooks/:id/delete', post, async (request, reply) => {
    const endpoint = await endpointOf(request)
    if (!endpoint) return notFound(request, reply)
    try {
      await webhooks.remove(userOf(request).accountId, endpoint.webhook_endpoint_id)
    } catch (caught) {
      if (!isApiError(caught) || caught.code !== 'webhook_endpoint_not_found') throw caught
    }
    request.log.info(
      { webhook_endpoint_id: endpoint.webhook_endpoint_id },
      'webhook endpoint deleted in the console',
    )
    return reply.redirect('/console/webhooks?done=deleted', 303)
  })
}
