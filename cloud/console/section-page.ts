import type { FastifyReply, FastifyRequest } from 'fastify'
import { userOf } from './guards.ts'
import { html, type PageParts, renderPage, type Section, sendPage } from './layout.ts'

/** The parts of a signed-in page that differ from page to page. */
export type SectionPageParts = Omit<PageParts, 'user' | 'csrfToken' | 'section'>

/**
 * Sends a page of one section of the console to the signed-in user of the request (after `requireUser`): the
 * one layout with the section marked in the navigation and a CSRF token for the sign-out form.
 */
export function sendSectionPage(
  request: FastifyRequest,
  reply: FastifyReply,
  section: Section,
  status: number,
  parts: SectionPageParts,
): FastifyReply {
  return sendPage(
    reply,
    status,
    renderPage({ user: userOf(request), csrfToken: reply.generateCsrf(), section, ...parts }),
  )
}

/**
 * The 404 page of an id that names nothing of the account: unknown, malformed and another account's ids get
 * the same page, so that it tells nothing of other accounts.
 */
export function sendNotFound(
  request: FastifyRequest,
  reply: FastifyReply,
  section: Section,
  thing: { name: string; listPath: string; listLabel: string },
): FastifyReply {
  return sendSectionPage(request, reply, section, 404, {
    title: `${thing.name} not found`,
    body: html`<h1>${thing.name} not found</h1>
<p>This account has no ${thing.name.toLowerCase()} with that id.</p>
<p><a href="${thing.listPath}">${thing.listLabel}</a></p>`,
  })
}
