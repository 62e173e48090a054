import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify'
import { SCOPES, type Scope } from '../../protocol/enums.ts'
import { createApiClient, isApiClientName, isScope } from '../auth/new-api-client.ts'
import type { ApiClient } from '../storage/api-clients.ts'
import { isUuid } from '../uuid.ts'
import type { ConsoleOptions } from './console-context.ts'
import { field } from './form-fields.ts'
import { requireOwner, userOf } from './guards.ts'
import { timeElement } from './job-view.ts'
import { csrfField, type Html, html, type PageParts } from './layout.ts'
import { type SectionPageParts, sendNotFound, sendSectionPage } from './section-page.ts'

type ListedClient = Omit<ApiClient, 'secret_hash'>

/** What each scope lets a token do (spec: Authentication), for the create form. */
const SCOPE_WORDS: Record<Scope, string> = {
  'printers:read': 'list printers and read their state',
  'documents:write': 'upload documents',
  'print_jobs:write': 'create and cancel print jobs',
  'print_jobs:read': 'read print jobs',
  'webhooks:write': 'manage webhook endpoints and their deliveries',
}

/** Fixed notices after a redirect (never text from the query). */
const NOTICES: Record<string, NonNullable<PageParts['notice']>> = {
  revoked: {
    kind: 'ok',
    text: 'The API client is revoked: its tokens no longer work and its secret gets no new ones.',
  },
}

interface CreateForm {
  name: string
  scopes: readonly string[]
}

/** The `scope` checkboxes of a posted form: none, one (a string) or several (an array, from @fastify/formbody). */
function checkedScopes(body: unknown): string[] {
  const value =
    typeof body === 'object' && body !== null ? (body as Record<string, unknown>).scope : undefined
  const values = Array.isArray(value) ? value : [value]
  return values.filter((v): v is string => typeof v === 'string')
}

const clientName = (client: ListedClient): Html | string =>
  client.name ?? html`<span class="muted">Unnamed (made with the CLI)</span>`

function clientsTable(clients: ListedClient[]): Html {
  if (clients.length === 0) return html`<p>No API clients yet.</p>`
  return html`<div class="table-wrap"><table>
<caption class="muted">Oldest first. Secrets are never shown again after creation.</caption>
<thead><tr><th scope="col">Name</th><th scope="col">State</th><th scope="col">Scopes</th><th scope="col">Created</th><th scope="col">Client id</th></tr></thead>
<tbody>${clients.map(
    (c) => html`<tr>
<th scope="row">${clientName(c)}</th>
<td>${
      c.revoked_at
        ? html`<span class="badge bad">Revoked</span> ${timeElement(c.revoked_at)}`
        : html`<span class="badge ok">Active</span> <a href="/console/api-clients/${c.client_id}/revoke" aria-label="Revoke ${c.name ?? c.client_id}">Revoke</a>`
    }</td>
<td>${c.scopes.length === 0 ? 'None' : c.scopes.join(', ')}</td>
<td>${timeElement(c.created_at)}</td>
<td><code>${c.client_id}</code></td>
</tr>`,
  )}</tbody>
</table></div>`
}

function createForm(csrfToken: string, form: CreateForm): Html {
  return html`<h2>Create an API client</h2>
<form class="stack" method="post" action="/console/api-clients">
${csrfField(csrfToken)}
<label for="client-name">Name</label>
<input type="text" id="client-name" name="name" required maxlength="100" autocomplete="off" value="${form.name}" aria-describedby="client-name-hint">
<p class="muted" id="client-name-hint">What you call it, such as the system that will print with it (1 to 100 characters).</p>
<fieldset>
<legend>Scopes: what its tokens may do</legend>
${SCOPES.map(
  (scope) =>
    html`<label for="scope-${scope.replace(':', '-')}"><input type="checkbox" id="scope-${scope.replace(':', '-')}" name="scope" value="${scope}"${form.scopes.includes(scope) ? html` checked` : ''}> <code>${scope}</code>: ${SCOPE_WORDS[scope]}</label>`,
)}
</fieldset>
<button type="submit">Create API client</button>
</form>`
}

function createdSection(client: ApiClient, secret: string): Html {
  return html`<section aria-labelledby="created-heading">
<h2 id="created-heading">Credentials of ${client.name ?? 'the new client'}</h2>
<p class="warning" role="alert"><strong>Copy the secret now: it is shown only on this page and never again.</strong> It is stored only as a hash; if it is lost, revoke this client and create another.</p>
<dl class="facts">
<dt>Client id</dt><dd class="secret"><code id="new-client-id">${client.client_id}</code> <button type="button" data-copy="new-client-id" hidden>Copy id</button></dd>
<dt>Client secret</dt><dd class="secret"><code id="new-client-secret">${secret}</code> <button type="button" data-copy="new-client-secret" hidden>Copy secret</button></dd>
<dt>Scopes</dt><dd>${client.scopes.join(', ')}</dd>
</dl>
<p>Your system exchanges them for an access token with <code>POST /oauth/token</code> (<code>grant_type=client_credentials</code>).</p>
</section>`
}

/**
 * The API clients pages (owner-only, docs/console.md): the account's clients (never a secret), create one with
 * a name and scopes (its secret shown once, in the answer to the form), revoke one after a confirmation.
 */
export const apiClientsPages: FastifyPluginAsync<ConsoleOptions> = async (app, { storage, clock }) => {
  const send = (request: FastifyRequest, reply: FastifyReply, status: number, parts: SectionPageParts) =>
    sendSectionPage(request, reply, 'api-clients', status, parts)
  const page = async (
    request: FastifyRequest,
    reply: FastifyReply,
    status: number,
    parts: { notice?: PageParts['notice']; created?: Html; form?: CreateForm },
  ) => {
    const clients = await storage.apiClients.listForAccount(userOf(request).accountId)
    return send(request, reply, status, {
      title: 'API clients',
      ...(parts.notice && { notice: parts.notice }),
      body: html`<h1>API clients</h1>
${parts.created ?? ''}
<p>An API client lets one of your systems print through the API. Each has its own secret and scopes; revoke one and its tokens stop working at once.</p>
${clientsTable(clients)}
${createForm(reply.generateCsrf(), parts.form ?? { name: '', scopes: [] })}`,
    })
  }
  const notFound = (request: FastifyRequest, reply: FastifyReply) =>
    sendNotFound(request, reply, 'api-clients', {
      name: 'API client',
      listPath: '/console/api-clients',
      listLabel: 'API clients',
    })
  /** The account's client named by the route's :id; undefined for another account's, an unknown or malformed id. */
  const clientOf = async (request: FastifyRequest): Promise<ApiClient | undefined> => {
    const id = field(request.params, 'id')
    if (!isUuid(id)) return undefined
    const client = await storage.apiClients.findById(id)
    return client?.account_id === userOf(request).accountId ? client : undefined
  }

  app.get('/api-clients', { schema: { hide: true }, preHandler: requireOwner }, async (request, reply) => {
    const notice = NOTICES[field(request.query, 'done')]
    return page(request, reply, 200, notice ? { notice } : {})
  })

  // The secret is shown in this answer (no-store, like every console page) rather than after a redirect: it is
  // kept nowhere to be shown again, so a reload re-posts the form and makes another client, never re-shows it.
  app.post(
    '/api-clients',
    { schema: { hide: true }, preValidation: app.csrfProtection, preHandler: requireOwner },
    async (request, reply) => {
      const name = field(request.body, 'name').trim()
      const scopes = checkedScopes(request.body)
      const form = { name, scopes }
      const refuse = (text: string) => page(request, reply, 422, { notice: { kind: 'error', text }, form })
      if (!isApiClientName(name)) return refuse('Enter a name of 1 to 100 characters.')
      if (scopes.length === 0) return refuse('Choose at least one scope.')
      if (!scopes.every(isScope)) return refuse('Choose scopes from the list.')
      const { client, secret } = await createApiClient(storage, userOf(request).accountId, scopes, name)
      request.log.info(
        { client_id: client.client_id, scopes: client.scopes },
        'API client created in the console',
      )
      return page(request, reply, 201, {
        notice: { kind: 'ok', text: 'API client created.' },
        created: createdSection(client, secret),
      })
    },
  )

  app.get(
    '/api-clients/:id/revoke',
    { schema: { hide: true }, preHandler: requireOwner },
    async (request, reply) => {
      const client = await clientOf(request)
      if (!client) return notFound(request, reply)
      if (client.revoked_at) return reply.redirect('/console/api-clients', 303)
      return send(request, reply, 200, {
        title: 'Revoke API client',
        body: html`<h1>Revoke ${client.name ?? 'this API client'}?</h1>
<p class="warning">Its access tokens stop working at once and its secret gets no new ones. Whatever uses it can no longer print. This cannot be undone.</p>
<dl class="facts"><dt>Client id</dt><dd><code>${client.client_id}</code></dd><dt>Scopes</dt><dd>${client.scopes.join(', ')}</dd></dl>
<form class="inline" method="post" action="/console/api-clients/${client.client_id}/revoke">${csrfField(reply.generateCsrf())}<button type="submit" class="danger">Revoke it</button></form>
<p><a href="/console/api-clients">Keep it and go back</a></p>`,
      })
    },
  )

  app.post(
    '/api-clients/:id/revoke',
    { schema: { hide: true }, preValidation: app.csrfProtection, preHandler: requireOwner },
    async (request, reply) => {
      const client = await clientOf(request)
      if (!client) return notFound(request, reply)
      await storage.apiClients.revoke(client.client_id, new Date(clock.now()))
      request.log.info({ client_id: client.client_id }, 'API client revoked in the console')
      return reply.redirect('/console/api-clients?done=revoked', 303)
    },
  )
}
