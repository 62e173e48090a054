import cookie from '@fastify/cookie'
import csrfProtection from '@fastify/csrf-protection'
import formbody from '@fastify/formbody'
import session from '@fastify/session'
import type { FastifyPluginAsync, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import type { CloudConfig } from '../config.ts'
import type { Storage } from '../storage/storage.ts'
import type { ConsoleClock } from './console-context.ts'
import { DatabaseSessionStore } from './session-store.ts'

export interface SessionSupportOptions {
  storage: Storage
  config: CloudConfig
  clock: ConsoleClock
}

/** The session cookie's name and attributes (docs/console.md, "Sessions"). */
export function sessionCookie(publicUrl: string) {
  const secure = publicUrl.startsWith('https:')
  return secure
    ? // RFC 6265bis §4.1.3.2: a __Host- cookie is Secure, has no Domain and has Path=/ (so it cannot be
      // set or shadowed by another host or path).
      { name: '__Host-console_session', path: '/', secure }
    : { name: 'console_session', path: '/console', secure }
}

/** How long since the last activity before lastSeenAt is written again (idle expiry to the minute). */
const ACTIVITY_GRANULARITY_MS = 60_000

/**
 * The console's sessions and CSRF protection (docs/console.md): cookies, url-encoded forms, @fastify/session
 * on the database, @fastify/csrf-protection keeping its secret in the session, and `request.consoleUser` from
 * the session once its idle and absolute expiries and its user are checked. Wrapped with fastify-plugin so
 * that these reach the console's page modules (and only them: the console plugin itself is encapsulated).
 */
const plugin: FastifyPluginAsync<SessionSupportOptions> = async (app, { storage, config, clock }) => {
  const idleMs = config.consoleIdleMinutes * 60_000
  const absoluteMs = config.consoleSessionHours * 3_600_000
  const cookieSettings = sessionCookie(config.publicUrl)
  await app.register(cookie)
  if (cookieSettings.secure) {
    // A Secure cookie is meant for https only (RFC 6265 §4.1.2.5): one that arrives on a plain-http request (its
    // sender was tricked into http, or a proxy forwarded without TLS) is not read, so it signs no one in.
    // request.protocol is https only over TLS, or with TRUST_PROXY and the proxy's X-Forwarded-Proto.
    // Runs between @fastify/cookie's parsing and @fastify/session's lookup (hooks run in registration order).
    app.addHook('onRequest', async (request: FastifyRequest) => {
      if (request.protocol !== 'https') delete request.cookies[cookieSettings.name]
    })
  }
  await app.register(formbody, { bodyLimit: 16 * 1024 })
  await app.register(session, {
    // The id is 192 random bits (the plugin's generator) looked up by its digest; a signature would add no
    // protection, and leaving it out spares every cloud node a shared signing key.
    secret: { sign: (value) => value, unsign: (value) => ({ valid: true, renew: false, value }) },
    cookieName: cookieSettings.name,
    // No Max-Age: the cookie ends with the browser; the server ends the session at either expiry.
    cookie: { path: cookieSettings.path, httpOnly: true, secure: cookieSettings.secure, sameSite: 'lax' },
    saveUninitialized: false,
    rolling: false,
    store: new DatabaseSessionStore(storage.consoleSessions, () => clock.now(), idleMs),
  })
  await app.register(csrfProtection, { sessionPlugin: '@fastify/session' })
  // Form routes name app.csrfProtection as a preValidation hook: the token is in the body, which is not parsed
  // yet at onRequest (where the plugin's README puts it, for tokens in headers).

  app.decorateRequest('consoleUser', null)
  app.addHook('onRequest', async (request: FastifyRequest) => {
    request.consoleUser = null
    const current = request.session
    if (!current?.userId) return
    const now = clock.now()
    const idle = now - (current.lastSeenAt ?? 0) >= idleMs
    const tooOld = now - (current.signedInAt ?? 0) >= absoluteMs
    const user = idle || tooOld ? undefined : await storage.users.findById(current.userId)
    if (!user) {
      // Ended: the row goes, a fresh session takes its place (keeping the CSRF secret, so that a form posted
      // after the expiry reaches the sign-in redirect rather than a CSRF refusal).
      await current.regenerate(['_csrf'])
      return
    }
    request.consoleUser = {
      userId: user.user_id,
      accountId: user.account_id,
      email: user.email,
      role: user.role,
    }
    if (now - (current.lastSeenAt ?? 0) >= ACTIVITY_GRANULARITY_MS) current.lastSeenAt = now
  })
}

export const sessionSupport = fp(plugin, { name: 'console-session-support' })
