import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify'
import { prepareStandIn, verifyPassword } from '../auth/passwords.ts'
import type { ConsoleOptions } from './console-context.ts'
import { field, formFields } from './form-fields.ts'
import { csrfField, html, renderPage, sendPage } from './layout.ts'
import { sessionCookie } from './session-support.ts'
import { createSignInThrottle } from './sign-in-throttle.ts'

const HOME = '/console'
const BASE = 'http://console.invalid'

/**
 * Where to go after signing in: a path of the console only (an open redirect would let a link to our sign-in
 * page send a person on to anywhere, OWASP Unvalidated Redirects). Anything else is the console's home.
 */
export function safeNext(next: string): string {
  if (next.length === 0 || next.length > 2000 || !next.startsWith('/') || /[\\\s]/.test(next)) return HOME
  let url: URL
  try {
    url = new URL(next, BASE)
  } catch {
    return HOME
  }
  if (url.origin !== BASE) return HOME
  if (url.pathname !== HOME && !url.pathname.startsWith(`${HOME}/`)) return HOME
  return `${url.pathname}${url.search}`
}

/** Fixed notices of the sign-in page after a redirect (never text from the query). */
const NOTICES: Record<string, string> = {
  'signed-out': 'You are signed out.',
  'password-set': 'Your password is set. Sign in with it.',
}

const WRONG = 'Wrong e-mail or password.'
/** How long the account choice after a right password stays open. */
const CHOICE_MS = 5 * 60_000

interface SignInForm {
  csrfToken: string
  next: string
  email?: string
  error?: string
  notice?: string
}

function signInPage(form: SignInForm): string {
  const notice = form.error
    ? { kind: 'error' as const, text: form.error }
    : form.notice
      ? { kind: 'ok' as const, text: form.notice }
      : undefined
  return renderPage({
    title: 'Sign in',
    user: null,
    ...(notice && { notice }),
    body: html`<h1>Sign in</h1>
<form class="stack" method="post" action="/console/sign-in">
${csrfField(form.csrfToken)}
<input type="hidden" name="next" value="${form.next}">
<label for="email">E-mail</label>
<input type="email" id="email" name="email" autocomplete="username" required maxlength="254" value="${form.email ?? ''}">
<label for="password">Password</label>
<input type="password" id="password" name="password" autocomplete="current-password" required>
<button type="submit">Sign in</button>
</form>`,
  })
}

function tooManyPage(reply: FastifyReply, retryAfterSeconds: number): FastifyReply {
  const minutes = Math.ceil(retryAfterSeconds / 60)
  reply.header('retry-after', String(retryAfterSeconds))
  return sendPage(
    reply,
    429,
    renderPage({
      title: 'Too many attempts',
      user: null,
      body: html`<h1>Too many attempts</h1>
<p>There were too many failed sign-ins for this e-mail or from this network. Try again in ${minutes} ${minutes === 1 ? 'minute' : 'minutes'}.</p>`,
    }),
  )
}

/** Signs the session in as this user, now (the session's id was just regenerated). */
function startSession(request: FastifyRequest, userId: string, now: number): void {
  request.session.userId = userId
  request.session.signedInAt = now
  request.session.lastSeenAt = now
}

/** The accounts a password was right for (names from storage), one button each. */
function accountChoicePage(csrfToken: string, accounts: { userId: string; name: string; role: string }[]) {
  return renderPage({
    title: 'Choose an account',
    user: null,
    body: html`<h1>Choose an account</h1>
<p>This e-mail and password sign in to more than one account. Which one?</p>
<ul class="stack">${accounts.map(
      (a) => html`<li><form method="post" action="/console/sign-in/account">
${csrfField(csrfToken)}
<input type="hidden" name="user_id" value="${a.userId}">
<button type="submit">${a.name} <span class="muted">(${a.role})</span></button>
</form></li>`,
    )}</ul>
<p><a href="/console/sign-in">Sign in with another e-mail</a></p>`,
  })
}

/** Sign-in and sign-out (docs/console.md, "Users and sign-in"). */
export const signInPages: FastifyPluginAsync<ConsoleOptions> = async (app, { storage, config, clock }) => {
  const throttle = createSignInThrottle(storage.signInFailures, clock, {
    perIp: config.consoleSignInFailuresPerIp,
    perEmail: config.consoleSignInFailuresPerEmail,
  })
  const cookie = sessionCookie(config.publicUrl)
  await prepareStandIn()

  app.get('/sign-in', { schema: { hide: true } }, async (request: FastifyRequest, reply) => {
    const next = safeNext(field(request.query, 'next'))
    if (request.consoleUser) return reply.redirect(next, 303)
    const notice = NOTICES[field(request.query, 'done')]
    return sendPage(
      reply,
      200,
      signInPage({ csrfToken: reply.generateCsrf(), next, ...(notice && { notice }) }),
    )
  })

  app.post(
    '/sign-in',
    { schema: { hide: true }, preValidation: app.csrfProtection },
    async (request: FastifyRequest, reply) => {
      const form = formFields(request.body, ['email', 'password', 'next'])
      const email = form.email.trim()
      const next = safeNext(form.next)
      const again = (status: number, error: string) =>
        sendPage(reply, status, signInPage({ csrfToken: reply.generateCsrf(), next, email, error }))
      if (email === '' || email.length > 254 || form.password === '') {
        return again(422, 'Enter your e-mail and password.')
      }
      const verdict = await throttle.check(request.ip, email)
      if (verdict.refused) return tooManyPage(reply, verdict.retryAfterSeconds)
      if (verdict.delayMs > 0) await clock.sleep(verdict.delayMs)
      // An e-mail is unique per account, so it may name users of several accounts, each with a password of
      // their own: the password decides. Every candidate's hash is checked at once (scrypt runs on libuv's
      // thread pool), and an unknown e-mail against a stand-in hash: the same work, the same answer.
      const candidates = await storage.users.findForSignIn(email)
      const verdicts = await Promise.all(
        (candidates.length > 0 ? candidates : [undefined]).map((c) =>
          verifyPassword(form.password, c?.passwordHash ?? null),
        ),
      )
      const matching = candidates.filter((_, i) => verdicts[i])
      if (matching.length === 0) {
        await throttle.failed(request.ip, email)
        return again(422, WRONG)
      }
      await throttle.succeeded(email)
      // A new session id at sign-in: an id planted before it (session fixation, OWASP) signs no one in.
      await request.session.regenerate()
      const now = clock.now()
      await storage.consoleSessions.purgeExpired(now)
      const [only] = matching
      if (only && matching.length === 1) {
        startSession(request, only.user.user_id, now)
        return reply.redirect(next, 303)
      }
      // The same password in several accounts: the person picks one (only those the password was right for).
      request.session.accountChoice = { userIds: matching.map((c) => c.user.user_id), next, checkedAt: now }
      request.session.lastSeenAt = now
      const accounts = await Promise.all(
        matching.map(async ({ user }) => ({
          userId: user.user_id,
          name: (await storage.accounts.findById(user.account_id))?.name ?? user.account_id,
          role: user.role,
        })),
      )
      return sendPage(reply, 200, accountChoicePage(reply.generateCsrf(), accounts))
    },
  )

  app.post(
    '/sign-in/account',
    { schema: { hide: true }, preValidation: app.csrfProtection },
    async (request: FastifyRequest, reply) => {
      const choice = request.session.accountChoice
      const userId = formFields(request.body, ['user_id']).user_id
      const now = clock.now()
      if (!choice || now - choice.checkedAt >= CHOICE_MS || !choice.userIds.includes(userId)) {
        return reply.redirect('/console/sign-in', 303)
      }
      await request.session.regenerate()
      startSession(request, userId, now)
      return reply.redirect(choice.next, 303)
    },
  )

  app.post(
    '/sign-out',
    { schema: { hide: true }, preValidation: app.csrfProtection },
    async (request: FastifyRequest, reply) => {
      await request.session.destroy()
      reply.clearCookie(cookie.name, {
        path: cookie.path,
        secure: cookie.secure,
        httpOnly: true,
        sameSite: 'lax',
      })
      return reply.redirect('/console/sign-in?done=signed-out', 303)
    },
  )
}
