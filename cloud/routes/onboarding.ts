import formbody from '@fastify/formbody'
import type { FastifyPluginAsync, FastifyReply } from 'fastify'
import { ApiError } from '../../print-api/api-error.ts'
import { hashSecret } from '../../print-api/secrets.ts'
import { messagePage, pageHeaders, pairingPage } from '../onboarding/page.ts'
import { normalizeUserCode } from '../pairing/user-code.ts'
import type { OnboardingTarget } from '../storage/pairings.ts'
import type { Storage } from '../storage/storage.ts'

export interface OnboardingOptions {
  storage: Storage
}

/** Wrong codes one onboarding link takes, from any address, before it is spent (guessing: RFC 8628 §5.1). */
export const CODE_ATTEMPTS_PER_LINK = 10

const gone = (outcome: 'used' | 'expired') =>
  outcome === 'used'
    ? messagePage(
        'This link was already used',
        'This onboarding link has been used. Ask for a new one if the hub is not connected.',
      )
    : messagePage('This link has expired', 'This onboarding link has expired. Ask for a new one.')
const unknown = () =>
  messagePage('Link not found', 'This onboarding link does not exist. Check that you opened the whole link.')

interface Params {
  token: string
}

/** Where the installer goes back to: the partner's return_uri with `state` and the result. */
function returnTo(link: OnboardingTarget, result: Record<string, string>): string {
  const url = new URL(link.returnUri)
  url.searchParams.set('state', link.state)
  for (const [name, value] of Object.entries(result)) url.searchParams.set(name, value)
  return url.href
}

/**
 * The hosted onboarding page (docs/developer-platform.md, "Onboarding page"): GET shows what to do and a form
 * for the hub's pairing code; POST pairs that hub with the link's enrollment and redirects to return_uri.
 */
export const onboardingRoutes: FastifyPluginAsync<OnboardingOptions> = async (app, { storage }) => {
  // Form posts only here (encapsulated: the JSON API takes no form bodies).
  await app.register(formbody, { bodyLimit: 1024 })

  const send = (reply: FastifyReply, status: number, html: string, returnOrigin?: string) =>
    reply.code(status).headers(pageHeaders(returnOrigin)).send(html)

  /** Failed attempts per address, as for tokens; a refused address gets a page, not JSON. */
  const guarded = async (reply: FastifyReply, attempt: () => Promise<void>) => {
    try {
      await attempt()
      return true
    } catch (error) {
      if (!(error instanceof ApiError) || error.code !== 'rate_limited') throw error
      reply.headers({ 'retry-after': error.headers['retry-after'] ?? '60' })
      send(reply, 429, messagePage('Too many attempts', `${error.message} Wait, then try again.`))
      return false
    }
  }

  app.get<{ Params: Params }>('/onboarding/:token', { schema: { hide: true } }, async (request, reply) => {
    const found = await storage.pairings.link(hashSecret(request.params.token), new Date())
    if (found.outcome === 'unknown') return send(reply, 404, unknown())
    if (found.outcome !== 'open') return send(reply, 410, gone(found.outcome))
    return send(reply, 200, pairingPage(found.enrollment.name), new URL(found.link.returnUri).origin)
  })

  app.post<{ Params: Params; Body: { code?: unknown } }>(
    '/onboarding/:token',
    { schema: { hide: true } },
    async (request, reply) => {
      if (!(await guarded(reply, () => app.tokenFailures.check(request)))) return reply
      const linkHash = hashSecret(request.params.token)
      const typed = typeof request.body?.code === 'string' ? request.body.code.slice(0, 64) : ''
      const code = normalizeUserCode(typed)
      const now = new Date()
      if (code === undefined) {
        const found = await storage.pairings.link(linkHash, now)
        if (found.outcome === 'unknown') return send(reply, 404, unknown())
        if (found.outcome !== 'open') return send(reply, 410, gone(found.outcome))
        const page = pairingPage(found.enrollment.name, 'A pairing code is 8 letters, like BCDF-GHJK.', typed)
        return send(reply, 422, page, new URL(found.link.returnUri).origin)
      }
      const paired = await storage.pairings.pair(linkHash, hashSecret(code), now, CODE_ATTEMPTS_PER_LINK)
      switch (paired.outcome) {
        case 'unknown':
          return send(reply, 404, unknown())
        case 'used':
        case 'expired':
          return send(reply, 410, gone(paired.outcome))
        case 'wrong_code': {
          const counted = await guarded(reply, () =>
            app.tokenFailures.record(request, `onboarding:${linkHash.toString('hex')}`),
          )
          if (!counted) return reply
          if (paired.failuresLeft === 0) {
            return reply
              .headers(pageHeaders())
              .redirect(returnTo(paired.link, { result: 'too_many_attempts' }), 303)
          }
          const page = pairingPage(
            paired.hubName,
            'That code is not right or has expired. Check the code on the slip and try again.',
            typed,
          )
          return send(reply, 422, page, new URL(paired.link.returnUri).origin)
        }
        case 'paired':
          request.log.info(
            { agent_id: paired.agentId, enrollment_id: paired.enrollment.enrollment_id },
            'hub paired on the onboarding page',
          )
          return reply
            .headers(pageHeaders())
            .redirect(returnTo(paired.link, { result: 'paired', agent_id: paired.agentId }), 303)
      }
    },
  )
}
