import type { FastifyReply } from 'fastify'
import type { ConsoleUser } from './console-context.ts'

/** Text for HTML (element content and quoted attribute values). */
export const escapeHtml = (text: string): string =>
  text.replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] ?? c,
  )

/**
 * A template tag that escapes every interpolated value unless it is already `Html` (a fragment built by this
 * tag or `raw`). Arrays are joined. Pages are built with it, so that a hub or printer name can never be markup.
 */
export class Html {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text
  }
}

type Part = Html | string | number | null | undefined | false | readonly Part[]

const render = (part: Part): string => {
  if (part === null || part === undefined || part === false) return ''
  if (part instanceof Html) return part.text
  if (Array.isArray(part)) return part.map(render).join('')
  return escapeHtml(String(part))
}

export function html(strings: TemplateStringsArray, ...parts: Part[]): Html {
  let text = strings[0] ?? ''
  parts.forEach((part, i) => {
    text += render(part) + (strings[i + 1] ?? '')
  })
  return new Html(text)
}

/** Markup that is already safe (trusted constants only). */
export const raw = (text: string): Html => new Html(text)

/** The sections of the console, in the order of its navigation; owner-only ones are hidden from members. */
const SECTIONS = [
  { id: 'overview', label: 'Overview', path: '/console', ownerOnly: false },
  { id: 'printers', label: 'Printers', path: '/console/printers', ownerOnly: false },
  { id: 'jobs', label: 'Jobs', path: '/console/jobs', ownerOnly: false },
  { id: 'hubs', label: 'Hubs', path: '/console/hubs', ownerOnly: false },
  { id: 'api-clients', label: 'API clients', path: '/console/api-clients', ownerOnly: true },
  { id: 'webhooks', label: 'Webhooks', path: '/console/webhooks', ownerOnly: true },
  { id: 'users', label: 'Users', path: '/console/users', ownerOnly: true },
] as const

export type Section = (typeof SECTIONS)[number]['id']

/** A hidden CSRF field for a form that posts (the session's token, from @fastify/csrf-protection). */
export const csrfField = (token: string): Html => html`<input type="hidden" name="_csrf" value="${token}">`

export interface PageParts {
  title: string
  /** Null on the signed-out pages (sign-in, set password): no navigation. */
  user: ConsoleUser | null
  /** The CSRF token for the sign-out form in the header; required when `user` is set. */
  csrfToken?: string
  /** The navigation entry marked as the current page. */
  section?: Section
  /** A message shown above the page's content (after a redirect that did something). */
  notice?: { kind: 'ok' | 'error'; text: string }
  body: Html
}

/**
 * The one layout of every console page: a skip link, the header with navigation and sign-out, the notice and the
 * body. One stylesheet and one script, both from /console/assets (the CSP allows nothing inline).
 */
export function renderPage(parts: PageParts): string {
  const { user, section, notice } = parts
  const nav = user
    ? html`<nav aria-label="Console"><ul>${SECTIONS.filter((s) => !s.ownerOnly || user.role === 'owner').map(
        (s) =>
          html`<li><a href="${s.path}"${s.id === section ? raw(' aria-current="page"') : ''}>${s.label}</a></li>`,
      )}</ul></nav>
<form class="sign-out" method="post" action="/console/sign-out">${csrfField(parts.csrfToken ?? '')}<span class="who">${user.email}</span> <button type="submit" class="link">Sign out</button></form>`
    : ''
  const page = html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>${parts.title} · Print Hub console</title>
<link rel="icon" href="/console/assets/icon.svg" type="image/svg+xml">
<link rel="stylesheet" href="/console/assets/console.css">
<script src="/console/assets/console.js" defer></script>
</head>
<body>
<a class="skip" href="#main">Skip to content</a>
<header class="top"><a class="brand" href="/console">Print Hub</a>${nav}</header>
<main id="main" tabindex="-1">
${notice ? html`<p class="notice ${notice.kind}" role="${notice.kind === 'error' ? 'alert' : 'status'}">${notice.text}</p>` : ''}
${parts.body}
</main>
</body>
</html>
`
  return page.text
}

/** Sends a rendered page; the security headers come from the console's helmet registration. */
export function sendPage(reply: FastifyReply, status: number, page: string): FastifyReply {
  return reply
    .code(status)
    .header('content-type', 'text/html; charset=utf-8')
    .header('cache-control', 'no-store')
    .send(page)
}
