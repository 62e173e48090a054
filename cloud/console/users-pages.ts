import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify'
import type { User } from '../storage/users.ts'
import type { ConsoleOptions, UserRole } from './console-context.ts'
import { field, formFields } from './form-fields.ts'
import { requireOwner, userOf } from './guards.ts'
import { csrfField, type Html, html } from './layout.ts'
import { createUserWithLink, isEmailAddress, USER_ROLES } from './new-user.ts'
import { sendNotFound, sendSectionPage } from './section-page.ts'

/** Fixed notices after a redirect (never text from the query). */
const NOTICES: Record<string, { kind: 'ok' | 'error'; text: string }> = {
  removed: { kind: 'ok', text: 'The user is removed and signed out everywhere.' },
  'not-yourself': { kind: 'error', text: 'You cannot remove yourself. Ask another owner.' },
  'last-owner': { kind: 'error', text: 'The last owner of an account cannot be removed.' },
}

interface AddForm {
  email: string
  role: string
}

function usersTable(users: User[], me: string, csrfToken: string): Html {
  return html`<div class="table-wrap"><table>
<caption class="muted">Everyone who can sign in to this account's console</caption>
<thead><tr><th scope="col">E-mail</th><th scope="col">Role</th><th scope="col">Password</th><th scope="col">Added</th><th scope="col"><span class="muted">Action</span></th></tr></thead>
<tbody>${users.map(
    (
      u,
    ) => html`<tr><th scope="row">${u.email}${u.user_id === me ? html` <span class="muted">(you)</span>` : ''}</th>
<td>${u.role}</td>
<td>${u.has_password ? html`<span class="badge ok">set</span>` : html`<span class="badge warn">not set yet</span>`}</td>
<td>${u.created_at.slice(0, 10)}</td>
<td>${
      u.user_id === me
        ? ''
        : html`<form class="inline" method="post" action="/console/users/${u.user_id}/remove">${csrfField(csrfToken)}<button type="submit" class="danger" aria-label="Remove ${u.email}">Remove</button></form>`
    }</td></tr>`,
  )}</tbody>
</table></div>`
}

function addForm(csrfToken: string, form: AddForm): Html {
  return html`<h2>Add a user</h2>
<form class="stack" method="post" action="/console/users">
${csrfField(csrfToken)}
<label for="email">E-mail</label>
<input type="email" id="email" name="email" required maxlength="254" autocomplete="off" value="${form.email}">
<label for="role">Role</label>
<select id="role" name="role">${USER_ROLES.map(
    (role) =>
      html`<option value="${role}"${role === form.role ? html` selected` : ''}>${role === 'owner' ? 'Owner (also manages users and API clients)' : 'Member'}</option>`,
  )}</select>
<button type="submit">Add user</button>
</form>`
}

/** The Users page (owner-only): list, add (with a one-time set-password link), remove (docs/console.md). */
export const usersPages: FastifyPluginAsync<ConsoleOptions> = async (app, { storage, config, clock }) => {
  const page = async (
    request: FastifyRequest,
    reply: FastifyReply,
    status: number,
    parts: { notice?: { kind: 'ok' | 'error'; text: string }; created?: Html; form?: AddForm },
  ) => {
    const me = userOf(request)
    const csrfToken = reply.generateCsrf()
    const users = await storage.users.listByAccount(me.accountId)
    return sendSectionPage(request, reply, 'users', status, {
      title: 'Users',
      ...(parts.notice && { notice: parts.notice }),
      body: html`<h1>Users</h1>
${parts.created ?? ''}
${usersTable(users, me.userId, csrfToken)}
${addForm(csrfToken, parts.form ?? { email: '', role: 'member' })}`,
    })
  }

  app.get('/users', { schema: { hide: true }, preHandler: requireOwner }, async (request, reply) => {
    const notice = NOTICES[field(request.query, 'done')]
    return page(request, reply, 200, notice ? { notice } : {})
  })

  // The answer shows the new user's set-password link at once rather than redirecting: the link is a secret,
  // so it is neither put in a URL nor kept anywhere to show later (a reload re-posts and finds the e-mail taken).
  app.post(
    '/users',
    { schema: { hide: true }, preValidation: app.csrfProtection, preHandler: requireOwner },
    async (request, reply) => {
      const me = userOf(request)
      const form = formFields(request.body, ['email', 'role'])
      const email = form.email.trim()
      const refuse = (text: string) => page(request, reply, 422, { notice: { kind: 'error', text }, form })
      if (!isEmailAddress(email)) return refuse('Enter an e-mail address.')
      if (!(USER_ROLES as readonly string[]).includes(form.role)) return refuse('Choose a role.')
      const result = await createUserWithLink(
        storage,
        { accountId: me.accountId, email, role: form.role as UserRole },
        { publicUrl: config.publicUrl, ttlHours: config.setPasswordTtlHours, now: clock.now() },
      )
      // Taken means taken in this account, which its owner sees in the list anyway. An address that another
      // account uses is added as any new one: the answer cannot tell an owner who is a customer elsewhere.
      if (result.outcome !== 'created') return refuse('This account already has a user with this e-mail.')
      const created = html`<section aria-labelledby="created-heading">
<h2 id="created-heading">Set-password link for ${result.user.email}</h2>
<p class="warning">Send this link to ${result.user.email}. It is shown only now, works once and expires in ${config.setPasswordTtlHours} hours.</p>
<p class="secret"><code id="set-password-url">${result.setPasswordUrl}</code> <button type="button" data-copy="set-password-url" hidden>Copy</button></p>
</section>`
      return page(request, reply, 201, { notice: { kind: 'ok', text: 'User added.' }, created })
    },
  )

  app.post(
    '/users/:userId/remove',
    { schema: { hide: true }, preValidation: app.csrfProtection, preHandler: requireOwner },
    async (request, reply) => {
      const me = userOf(request)
      const userId = field(request.params, 'userId')
      if (userId === me.userId) return reply.redirect('/console/users?done=not-yourself', 303)
      const outcome = await storage.users.remove(me.accountId, userId)
      if (outcome === 'not_found') {
        return sendNotFound(request, reply, 'users', {
          name: 'User',
          listPath: '/console/users',
          listLabel: 'Users',
        })
      }
      return reply.redirect(`/console/users?done=${outcome === 'removed' ? 'removed' : 'last-owner'}`, 303)
    },
  )
}
