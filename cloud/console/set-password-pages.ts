import type { FastifyPluginAsync, FastifyReply } from 'fastify'
import { hashSecret } from '../../print-api/secrets.ts'
import { hashPassword, PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH } from '../auth/passwords.ts'
import type { SetPasswordLink } from '../storage/users.ts'
import type { ConsoleOptions } from './console-context.ts'
import { field, formFields } from './form-fields.ts'
import { csrfField, html, renderPage, sendPage } from './layout.ts'

const CLOSED: Record<Exclude<SetPasswordLink['state'], 'open'>, { status: number; text: string }> = {
  unknown: { status: 404, text: 'This link is not valid. Check that it was copied whole.' },
  used: {
    status: 410,
    text: 'This link has been used. Sign in, or ask an owner of your account for a new link.',
  },
  expired: { status: 410, text: 'This link has expired. Ask an owner of your account for a new one.' },
}

function closedPage(reply: FastifyReply, state: keyof typeof CLOSED): FastifyReply {
  const { status, text } = CLOSED[state]
  return sendPage(
    reply,
    status,
    renderPage({
      title: 'Set your password',
      user: null,
      body: html`<h1>Set your password</h1>
<p>${text}</p>
<p><a href="/console/sign-in">Sign in</a></p>`,
    }),
  )
}

function formPage(
  reply: FastifyReply,
  status: number,
  token: string,
  email: string,
  error?: string,
): FastifyReply {
  return sendPage(
    reply,
    status,
    renderPage({
      title: 'Set your password',
      user: null,
      ...(error && { notice: { kind: 'error' as const, text: error } }),
      body: html`<h1>Set your password</h1>
<p>For <strong>${email}</strong>. This link works once.</p>
<form class="stack" method="post" action="/console/set-password/${encodeURIComponent(token)}">
${csrfField(reply.generateCsrf())}
<input type="text" name="username" autocomplete="username" value="${email}" hidden>
<label for="password">New password</label>
<p class="muted" id="password-hint">At least ${PASSWORD_MIN_LENGTH} characters, at most ${PASSWORD_MAX_LENGTH}. A passphrase of several words is good.</p>
<input type="password" id="password" name="password" autocomplete="new-password" required minlength="${PASSWORD_MIN_LENGTH}" maxlength="${PASSWORD_MAX_LENGTH}" aria-describedby="password-hint">
<label for="confirmation">New password again</label>
<input type="password" id="confirmation" name="confirmation" autocomplete="new-password" required>
<button type="submit">Set password</button>
</form>`,
    }),
  )
}

/** Why a new password is refused (NIST SP 800-63B §5.1.1.2: length only, no composition rules); null if fine. */
export function passwordProblem(password: string, confirmation: string): string | null {
  const length = [...password].length
  if (length < PASSWORD_MIN_LENGTH) return `The password needs at least ${PASSWORD_MIN_LENGTH} characters.`
  if (length > PASSWORD_MAX_LENGTH) return `The password can have at most ${PASSWORD_MAX_LENGTH} characters.`
  if (password !== confirmation) return 'The two passwords are not the same.'
  return null
}

/** The one-time set-password link a new user gets (docs/console.md). */
export const setPasswordPages: FastifyPluginAsync<ConsoleOptions> = async (app, { storage, clock }) => {
  app.get('/set-password/:token', { schema: { hide: true } }, async (request, reply) => {
    const token = field(request.params, 'token')
    const link = await storage.users.findSetPasswordLink(hashSecret(token), clock.now())
    if (link.state !== 'open') return closedPage(reply, link.state)
    return formPage(reply, 200, token, link.user.email)
  })

  app.post(
    '/set-password/:token',
    { schema: { hide: true }, preValidation: app.csrfProtection },
    async (request, reply) => {
      const token = field(request.params, 'token')
      const tokenHash = hashSecret(token)
      const link = await storage.users.findSetPasswordLink(tokenHash, clock.now())
      if (link.state !== 'open') return closedPage(reply, link.state)
      const form = formFields(request.body, ['password', 'confirmation'])
      const problem = passwordProblem(form.password, form.confirmation)
      if (problem) return formPage(reply, 422, token, link.user.email, problem)
      const used = await storage.users.useSetPasswordLink(
        tokenHash,
        await hashPassword(form.password),
        clock.now(),
      )
      if (used.state !== 'open') return closedPage(reply, used.state)
      return reply.redirect('/console/sign-in?done=password-set', 303)
    },
  )
}
