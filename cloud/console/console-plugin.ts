import { readFileSync } from 'node:fs'
import helmet from '@fastify/helmet'
import type { FastifyPluginAsync } from 'fastify'
import { apiClientsPages } from './api-clients-pages.ts'
import type { ConsoleOptions } from './console-context.ts'
import { consoleErrorPages } from './error-pages.ts'
import { hubsPages } from './hubs-pages.ts'
import { jobsPages } from './jobs-pages.ts'
import { overviewPage } from './overview-page.ts'
import { printersPages } from './printers-pages.ts'
import { sessionSupport } from './session-support.ts'
import { setPasswordPages } from './set-password-pages.ts'
import { signInPages } from './sign-in-pages.ts'
import { usersPages } from './users-pages.ts'
import { webhooksPages } from './webhooks-pages.ts'

const asset = (name: string) => readFileSync(new URL(`./assets/${name}`, import.meta.url))
const ASSETS = {
  'console.css': { body: asset('console.css'), type: 'text/css; charset=utf-8' },
  'console.js': { body: asset('console.js'), type: 'text/javascript; charset=utf-8' },
  // Named by every page, so that browsers do not ask the origin for /favicon.ico (a 404).
  'icon.svg': { body: asset('icon.svg'), type: 'image/svg+xml' },
} as const

/**
 * The account console (docs/console.md), registered with the prefix /console: its own cookies, session, CSRF
 * protection and security headers, encapsulated so that the JSON API is untouched by them.
 */
export const consolePlugin: FastifyPluginAsync<ConsoleOptions> = async (app, options) => {
  // CSP Level 3: nothing inline, nothing from elsewhere; forms post only here; no framing (also X-Frame-Options).
  await app.register(helmet, {
    contentSecurityPolicy: {
      useDefaults: false,
      directives: {
        defaultSrc: ["'none'"],
        styleSrc: ["'self'"],
        scriptSrc: ["'self'"],
        imgSrc: ["'self'"],
        connectSrc: ["'self'"],
        formAction: ["'self'"],
        frameAncestors: ["'none'"],
        baseUri: ["'none'"],
      },
    },
    frameguard: { action: 'deny' },
    referrerPolicy: { policy: 'same-origin' },
    // HSTS only where the console is served over HTTPS (RFC 6797 §7.2: not sent over plain HTTP).
    strictTransportSecurity: options.config.publicUrl.startsWith('https:'),
  })

  for (const [name, { body, type }] of Object.entries(ASSETS)) {
    app.get(`/assets/${name}`, { schema: { hide: true } }, async (_request, reply) =>
      reply.header('content-type', type).header('cache-control', 'public, max-age=300').send(body),
    )
  }

  // What page modules are registered with: not the `prefix` option this plugin got (theirs would double it).
  const { storage, config, submitter, jobEvents, intake, webhooks, clock } = options
  const pages: ConsoleOptions = { storage, config, submitter, jobEvents, intake, webhooks, clock }
  // The pages in a context of their own, so that the assets above are served without loading a session and
  // its user from the database (three extra reads per page view).
  await app.register(async (scope) => {
    // Sessions, CSRF and request.consoleUser first: every page module below relies on them.
    await scope.register(sessionSupport, pages)
    await scope.register(consoleErrorPages)
    await scope.register(signInPages, pages)
    await scope.register(setPasswordPages, pages)
    await scope.register(usersPages, pages)
    // Page modules (one line each).
    await scope.register(jobsPages, pages)
    await scope.register(apiClientsPages, pages)
    await scope.register(webhooksPages, pages)
    await scope.register(printersPages, pages)
    await scope.register(overviewPage, pages)
    await scope.register(hubsPages, pages)
  })
}
