import { randomUUID } from 'node:crypto'
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify'
import type { Agent } from '../../protocol/agent.ts'
import { createEnrollment, isHubName, type NewEnrollment } from '../onboarding/new-enrollment.ts'
import { isAllowedReturnUri } from '../partner/onboarding.ts'
import { takeRevokedHubOffline } from '../presence/revoked-hub.ts'
import type { Enrollment } from '../storage/enrollments.ts'
import { isUuid } from '../uuid.ts'
import { accountPrinters } from './account-printers.ts'
import type { ConsoleOptions } from './console-context.ts'
import { field } from './form-fields.ts'
import { requireOwner, requireUser, userOf } from './guards.ts'
import { hubLanSection } from './hub-lan-section.ts'
import { printerCountWords, printersByHub, versionWords } from './hub-view.ts'
import { timeElement } from './job-view.ts'
import { csrfField, type Html, html, type PageParts } from './layout.ts'
import { onlineBadge } from './printer-view.ts'
import { type SectionPageParts, sendNotFound, sendSectionPage } from './section-page.ts'

type Notice = NonNullable<PageParts['notice']>

/** The notices after a change (Post/Redirect/Get, `?done=`): fixed words, never text from the request. */
const DONE_NOTICES: Record<string, Notice> = {
  'enrollment-revoked': {
    kind: 'ok',
    text: 'The enrollment is revoked: its token and its link no longer work.',
  },
  'enrollment-not-pending': {
    kind: 'error',
    text: 'That enrollment was no longer pending (a hub used it, or it expired), so nothing changed.',
  },
  renamed: { kind: 'ok', text: 'The hub is renamed.' },
  'lan-enabled': {
    kind: 'ok',
    text: 'LAN printing is on: the hub is told at once, and serves it while it is online or on its LAN.',
  },
  'lan-disabled': { kind: 'ok', text: 'LAN printing is off: the hub is told at once.' },
  removed: {
    kind: 'ok',
    text:
      'The hub is removed: its credential no longer works and it is offline. Its printers stay listed, ' +
      'offline, with their jobs. To use the device again, delete its identity.json (in /var/lib/print-hub on ' +
      'a packaged hub) and add it as a new hub.',
  },
}

/** Where the onboarding page sends the installer back (`?result=`, docs/developer-platform.md). */
const ONBOARDING_NOTICES: Record<string, Notice> = {
  paired: { kind: 'ok', text: 'The hub is paired. It shows as online here once it has connected.' },
  too_many_attempts: {
    kind: 'error',
    text: 'Too many wrong pairing codes were typed, so that onboarding link no longer works. Add the hub again for a new one.',
  },
}

const NAME_PROBLEM = 'Enter a name of 1 to 200 characters.'

/** The partner API's refusal, with its error code: a suspended or closed account takes no new enrollments. */
const INACTIVE_ACCOUNT: Notice = {
  kind: 'error',
  text: 'account_action_not_allowed: A suspended or closed account takes no new enrollments.',
}

/** The name field of a hub's form, with its hint; `value` is what was typed (kept after a refusal). */
const nameField = (id: string, value: string): Html =>
  html`<label for="${id}">Name</label>
<input type="text" id="${id}" name="name" required maxlength="200" autocomplete="off" value="${value}" aria-describedby="${id}-hint">
<p class="muted" id="${id}-hint">Where it is, such as “Front desk” (1 to 200 characters).</p>`

/** What an installer runs on the new hub: the packaged hub's settings, or a hub run from a source checkout. */
function installSteps(publicUrl: string, issued: NewEnrollment): Html {
  const packaged = `sudo tee /etc/default/print-hub >/dev/null <<'EOF'
PRINT_HUB_CLOUD=${publicUrl}
PRINT_HUB_OPTIONS=--enroll ${issued.token}
EOF
sudo systemctl restart print-hub`
  const checkout = `npm run -s hub -- run --cloud ${publicUrl} --data ./hub-data --enroll ${issued.token}`
  const link = issued.onboardingUrl
  return html`<section aria-labelledby="enrolled-heading">
<h2 id="enrolled-heading">Connect ${issued.enrollment.name}</h2>
<p class="warning" role="alert"><strong>Copy the token now: it is shown only on this page and never again.</strong> It works once, until ${timeElement(issued.enrollment.expires_at)}. If it is lost, revoke this enrollment below and add the hub again.</p>
<dl class="facts">
<dt>Enrollment token</dt><dd class="secret"><code id="enrollment-token">${issued.token}</code> <button type="button" data-copy="enrollment-token" hidden>Copy token</button></dd>
</dl>
<h3>On a hub installed from the package</h3>
<p>Run this on the hub (it names this cloud and the token, then starts the hub), then add any printers it does not find by itself to <code>PRINT_HUB_OPTIONS</code> with <code>--printer</code>:</p>
<pre><code id="packaged-command">${packaged}</code></pre>
<p><button type="button" data-copy="packaged-command" hidden>Copy these commands</button></p>
<h3>On a hub run from a source checkout</h3>
<pre><code id="checkout-command">${checkout}</code></pre>
<p><button type="button" data-copy="checkout-command" hidden>Copy this command</button></p>
${
  link
    ? html`<h3>Or pair it with a code instead of the token</h3>
<p>Start the hub without <code>--enroll</code> (leave <code>PRINT_HUB_OPTIONS</code> empty). It prints a pairing code on its first receipt or label printer and logs it. Open this link, on a phone for example, and type the code. The link works once, until the token expires; whichever is used first connects the hub.</p>
<p class="secret"><a id="onboarding-link" href="${link}">${link}</a> <button type="button" data-copy="onboarding-link" hidden>Copy link</button></p>`
    : ''
}
</section>`
}

/**
 * The Hubs pages of the console (docs/console.md): the account's hubs and pending enrollments; add a hub (an
 * enrollment, issued as the operator CLI and the partner API issue them), revoke a pending enrollment, rename a
 * hub, and remove one (its credential revoked, as `cloud hub revoke` does, and its presence ended). An owner
 * turns a hub's LAN printing on or off, as `cloud hub lan enable|disable` does.
 */
export const hubsPages: FastifyPluginAsync<ConsoleOptions> = async (app, { storage, config }) => {
  const send = (request: FastifyRequest, reply: FastifyReply, status: number, parts: SectionPageParts) =>
    sendSectionPage(request, reply, 'hubs', status, parts)
  const hubNotFound = (request: FastifyRequest, reply: FastifyReply) =>
    sendNotFound(request, reply, 'hubs', { name: 'Hub', listPath: '/console/hubs', listLabel: 'All hubs' })
  const enrollmentNotFound = (request: FastifyRequest, reply: FastifyReply) =>
    sendNotFound(request, reply, 'hubs', {
      name: 'Enrollment',
      listPath: '/console/hubs',
      listLabel: 'All hubs',
    })
  /** The account's hub named by the route's :id, unless removed; undefined for anything else. */
  const hubOf = async (request: FastifyRequest): Promise<Agent | undefined> => {
    const id = field(request.params, 'id')
    return isUuid(id) ? storage.agents.findUnrevoked(userOf(request).accountId, id) : undefined
  }
  /** The account's enrollment named by the route's :id; undefined for another account's or an unknown id. */
  const enrollmentOf = async (request: FastifyRequest): Promise<Enrollment | undefined> => {
    const id = field(request.params, 'id')
    const enrollment = isUuid(id) ? await storage.enrollments.findById(id) : undefined
    return enrollment?.account_id === userOf(request).accountId ? enrollment : undefined
  }
  /** The onboarding page sends the installer back here; a console that is not served over https (or on the
   * loopback) cannot be a return_uri, and then only the token is offered. */
  const returnUri = `${config.publicUrl}/console/hubs`
  const offersOnboardingLink = isAllowedReturnUri(returnUri)

  const listPage = async (
    request: FastifyRequest,
    reply: FastifyReply,
    status: number,
    parts: { notice?: Notice; issued?: NewEnrollment; typedName?: string },
  ) => {
    const { accountId } = userOf(request)
    const [hubs, printers, enrollments] = await Promise.all([
      storage.agents.listUnrevoked(accountId),
      accountPrinters(storage, accountId),
      storage.enrollments.listPending(accountId, new Date()),
    ])
    const byHub = printersByHub(printers)
    const hubsTable =
      hubs.length === 0
        ? html`<p>No hubs yet. Add one below: a hub is the small computer beside your printers that connects them to this service.</p>`
        : html`<div class="table-wrap"><table>
<thead><tr><th scope="col">Hub</th><th scope="col">Online</th><th scope="col">Last seen</th><th scope="col">Version</th><th scope="col">Printers</th></tr></thead>
<tbody>${hubs.map(
            (hub) => html`<tr>
<th scope="row"><a href="/console/hubs/${hub.agent_id}">${hub.name}</a></th>
<td>${onlineBadge(hub)}</td>
<td>${timeElement(hub.last_seen_at)}</td>
<td>${versionWords(hub)}</td>
<td>${printerCountWords(byHub.get(hub.agent_id)?.length ?? 0)}</td>
</tr>`,
          )}</tbody>
</table></div>`
    const csrf = reply.generateCsrf()
    const enrollmentsTable =
      enrollments.length === 0
        ? html`<p>No enrollments are waiting for a hub.</p>`
        : html`<div class="table-wrap"><table>
<thead><tr><th scope="col">Hub name</th><th scope="col">Created</th><th scope="col">Expires</th><th scope="col">Action</th></tr></thead>
<tbody>${enrollments.map(
            (e) => html`<tr>
<th scope="row">${e.name}</th>
<td>${timeElement(e.created_at)}</td>
<td>${timeElement(e.expires_at)}</td>
<td><form class="inline" method="post" action="/console/hubs/enrollments/${e.enrollment_id}/revoke">${csrfField(csrf)}<button type="submit" class="danger" aria-label="Revoke the enrollment of ${e.name}">Revoke</button></form></td>
</tr>`,
          )}</tbody>
</table></div>`
    return send(request, reply, status, {
      title: 'Hubs',
      ...(parts.notice && { notice: parts.notice }),
      body: html`<h1>Hubs</h1>
${parts.issued ? installSteps(config.publicUrl, parts.issued) : ''}
<h2>Hubs of this account</h2>
${hubsTable}
<h2>Pending enrollments</h2>
<p class="muted">Each is a single-use token (and link) for a hub that has not connected yet.</p>
${enrollmentsTable}
<h2 id="add-hub">Add a hub</h2>
<form class="stack" method="post" action="/console/hubs/enrollments">
${csrfField(csrf)}
${nameField('hub-name', parts.typedName ?? '')}
<button type="submit">Add hub</button>
</form>`,
    })
  }

  app.get('/hubs', { schema: { hide: true }, preHandler: requireUser }, async (request, reply) => {
    const notice =
      DONE_NOTICES[field(request.query, 'done')] ?? ONBOARDING_NOTICES[field(request.query, 'result')]
    return listPage(request, reply, 200, notice ? { notice } : {})
  })

  // The token is shown in this answer (no-store, like every console page) rather than after a redirect: it is
  // kept nowhere to be shown again, so a reload re-posts the form and issues another enrollment.
  app.post(
    '/hubs/enrollments',
    { schema: { hide: true }, preValidation: app.csrfProtection, preHandler: requireUser },
    async (request, reply) => {
      const name = field(request.body, 'name').trim()
      if (!isHubName(name))
        return listPage(request, reply, 422, {
          notice: { kind: 'error', text: NAME_PROBLEM },
          typedName: name,
        })
      const { accountId } = userOf(request)
      // The partner API's rule (docs/developer-platform.md): only an active account takes enrollments.
      if (!(await storage.accounts.isActive(accountId)))
        return listPage(request, reply, 422, { notice: INACTIVE_ACCOUNT, typedName: name })
      const asked = { accountId, name, ttlHours: config.enrollmentTtlHours }
      const issued = offersOnboardingLink
        ? await createEnrollment(storage.enrollments, asked, {
            publicUrl: config.publicUrl,
            returnUri,
            state: randomUUID(),
          })
        : await createEnrollment(storage.enrollments, asked)
      request.log.info({ enrollment_id: issued.enrollment.enrollment_id }, 'enrollment issued in the console')
      return listPage(request, reply, 201, {
        notice: { kind: 'ok', text: 'Enrollment created. Connect the hub with it as shown below.' },
        issued,
      })
    },
  )

  app.post(
    '/hubs/enrollments/:id/revoke',
    { schema: { hide: true }, preValidation: app.csrfProtection, preHandler: requireUser },
    async (request, reply) => {
      const enrollment = await enrollmentOf(request)
      if (!enrollment) return enrollmentNotFound(request, reply)
      const revoked = await storage.enrollments.revoke(enrollment.enrollment_id, new Date())
      if (revoked)
        request.log.info({ enrollment_id: enrollment.enrollment_id }, 'enrollment revoked in the console')
      return reply.redirect(
        `/console/hubs?done=${revoked ? 'enrollment-revoked' : 'enrollment-not-pending'}`,
        303,
      )
    },
  )

  const hubPage = async (
    request: FastifyRequest,
    reply: FastifyReply,
    hub: Agent,
    status: number,
    parts: { notice?: Notice; typedName?: string },
  ) => {
    const printers = printersByHub(await accountPrinters(storage, userOf(request).accountId))
    const own = printers.get(hub.agent_id) ?? []
    const csrf = reply.generateCsrf()
    return send(request, reply, status, {
      title: hub.name,
      ...(parts.notice && { notice: parts.notice }),
      body: html`<h1>${hub.name}</h1>
<dl class="facts">
<dt>Hub</dt><dd>${onlineBadge(hub)}</dd>
<dt>Last seen</dt><dd>${timeElement(hub.last_seen_at)}</dd>
<dt>Version</dt><dd>${versionWords(hub)}</dd>
<dt>Added</dt><dd>${timeElement(hub.created_at)}</dd>
<dt>Printers</dt><dd>${
        own.length === 0
          ? 'No printers'
          : html`<ul>${own.map((p) => html`<li><a href="/console/printers/${p.printer_id}">${p.name}</a></li>`)}</ul>`
      }</dd>
<dt>Hub id</dt><dd><code>${hub.agent_id}</code></dd>
</dl>
${hubLanSection(hub, userOf(request).role === 'owner', csrf)}
<h2>Rename</h2>
<form class="stack" method="post" action="/console/hubs/${hub.agent_id}/rename">
${csrfField(csrf)}
${nameField('hub-rename', parts.typedName ?? hub.name)}
<button type="submit">Rename hub</button>
</form>
<h2>Remove</h2>
<p>Removing a hub cuts it off: its credential stops working at once and it goes offline.</p>
<p><a href="/console/hubs/${hub.agent_id}/remove">Remove this hub…</a></p>
<p><a href="/console/hubs">All hubs</a></p>`,
    })
  }

  app.get('/hubs/:id', { schema: { hide: true }, preHandler: requireUser }, async (request, reply) => {
    const hub = await hubOf(request)
    if (!hub) return hubNotFound(request, reply)
    const notice = DONE_NOTICES[field(request.query, 'done')]
    return hubPage(request, reply, hub, 200, notice ? { notice } : {})
  })

  app.post(
    '/hubs/:id/rename',
    { schema: { hide: true }, preValidation: app.csrfProtection, preHandler: requireUser },
    async (request, reply) => {
      const hub = await hubOf(request)
      if (!hub) return hubNotFound(request, reply)
      const name = field(request.body, 'name').trim()
      if (!isHubName(name))
        return hubPage(request, reply, hub, 422, {
          notice: { kind: 'error', text: NAME_PROBLEM },
          typedName: name,
        })
      if (!(await storage.agents.rename(userOf(request).accountId, hub.agent_id, name)))
        return hubNotFound(request, reply)
      return reply.redirect(`/console/hubs/${hub.agent_id}?done=renamed`, 303)
    },
  )

  for (const [action, enabled] of [
    ['enable', true],
    ['disable', false],
  ] as const)
    app.post(
      `/hubs/:id/lan/${action}`,
      { schema: { hide: true }, preValidation: app.csrfProtection, preHandler: requireOwner },
      async (request, reply) => {
        const hub = await hubOf(request)
        if (!hub) return hubNotFound(request, reply)
        // Every cloud node tells the hub `refresh_lan` within a second (presence/lan-refresh.ts).
        const at = new Date().toISOString()
        if (!(await storage.agents.setLanApi(userOf(request).accountId, hub.agent_id, enabled, at)))
          return hubNotFound(request, reply)
        request.log.info(
          { agent_id: hub.agent_id, lan_api_enabled: enabled },
          'hub LAN API set in the console',
        )
        return reply.redirect(`/console/hubs/${hub.agent_id}?done=lan-${action}d`, 303)
      },
    )

  app.get('/hubs/:id/remove', { schema: { hide: true }, preHandler: requireUser }, async (request, reply) => {
    const hub = await hubOf(request)
    if (!hub) return hubNotFound(request, reply)
    return send(request, reply, 200, {
      title: 'Remove hub',
      body: html`<h1>Remove ${hub.name}?</h1>
<p class="warning">Its credential stops working at once and it goes offline: it prints nothing more. This cannot be undone; to use the device again, delete its <code>identity.json</code> (in <code>/var/lib/print-hub</code> on a packaged hub) and add it as a new hub.</p>
<form class="inline" method="post" action="/console/hubs/${hub.agent_id}/remove">${csrfField(reply.generateCsrf())}<button type="submit" class="danger">Remove it</button></form>
<p><a href="/console/hubs/${hub.agent_id}">Keep it and go back</a></p>`,
    })
  })

  app.post(
    '/hubs/:id/remove',
    { schema: { hide: true }, preValidation: app.csrfProtection, preHandler: requireUser },
    async (request, reply) => {
      const hub = await hubOf(request)
      if (!hub) return hubNotFound(request, reply)
      // As `cloud hub revoke`: the broker refuses its credential from now on and every cloud node closes its
      // MQTT session within a second (cloud/broker/revoked-hubs.ts); its presence ends here at once.
      await storage.agents.revoke(hub.agent_id, new Date())
      await takeRevokedHubOffline(storage, hub.agent_id)
      request.log.info({ agent_id: hub.agent_id }, 'hub removed in the console')
      return reply.redirect('/console/hubs?done=removed', 303)
    },
  )
}
