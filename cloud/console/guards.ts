import '@fastify/csrf-protection'
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { ConsoleUser } from './console-context.ts'
import { html, renderPage, sendPage } from './layout.ts'

/**
 * preHandler of every signed-in page: someone signed out is sent to sign in, and back here after
 * (303 See Other, RFC 9110 §15.4.4, so that a form post becomes a GET of the sign-in page).
 */
export async function requireUser(request: FastifyRequest, reply: FastifyReply): Promise<void> {
  if (request.consoleUser) return
  const next = request.method === 'GET' ? `?next=${encodeURIComponent(request.url)}` : ''
  await reply.redirect(`/console/sign-in${next}`, 303)
}

/**
 * preHandler of the pages only an owner uses (API clients, webhooks, users, a hub's LAN printing): a member gets a
 * 403 page that says why.
 */
export async function requireOwner(request: FastifyRequest, reply: FastifyReply): Promise<void> {
  await requireUser(request, reply)
  if (reply.sent || request.consoleUser?.role === 'owner') return
  await sendPage(
    reply,
    403,
    renderPage({
      title: 'Not allowed',
      user: request.consoleUser,
      csrfToken: reply.generateCsrf(),
      body: html`<h1>Not allowed</h1>
<p>Only an owner of this account can manage API clients, webhooks and users, and turn a hub’s LAN printing on or off. Ask an owner if you need one.</p>`,
    }),
  )
}

/** The signed-in user of a request that passed `requireUser`. */
export function userOf(request: FastifyRequest): ConsoleUser {
  const user = request.consoleUser
  if (!user) throw new Error('userOf: the route has no requireUser preHandler')
  return user
}
