import type { FastifyRequest } from 'fastify'
import { ApiError } from './api-error.ts'

export interface ClientCredentials {
  clientId: string
  clientSecret: string
}

/** RFC 6749 §5.2 and RFC 9110 §11.6.1: every 401 names the scheme the client can authenticate with. */
export const BASIC_CHALLENGE = { 'www-authenticate': 'Basic realm="print-hub"' }

export const invalidRequest = (message: string) => new ApiError('invalid_request', message)

/** RFC 6749 §2.3.1: HTTP Basic with the form-urlencoded id and secret, or both in the body — never both ways. */
export function clientCredentials(
  request: FastifyRequest,
  body: Record<string, unknown>,
): ClientCredentials | null {
  const header = request.headers.authorization
  const inBody = body.client_id !== undefined || body.client_secret !== undefined
  if (header !== undefined) {
    if (/^Bearer(\s|$)/i.test(header)) {
      throw invalidRequest(
        'The token request carries an Authorization: Bearer header. /oauth/token takes the client credentials ' +
          '(client_id and client_secret in the form body, or HTTP Basic), not an access token: send it ' +
          'without that header.',
      )
    }
    if (inBody)
      throw invalidRequest('Send client credentials either in the body or with HTTP Basic, not both.')
    const match = /^Basic +([A-Za-z0-9+/]+=*) *$/i.exec(header)
    if (!match?.[1]) throw invalidRequest('The Authorization header is not valid HTTP Basic.')
    const decoded = Buffer.from(match[1], 'base64').toString('utf8')
    const colon = decoded.indexOf(':')
    if (colon < 0) throw invalidRequest('The Authorization header is not valid HTTP Basic.')
    try {
      const formDecode = (s: string) => decodeURIComponent(s.replaceAll('+', ' '))
      return {
        clientId: formDecode(decoded.slice(0, colon)),
        clientSecret: formDecode(decoded.slice(colon + 1)),
      }
    } catch {
      throw invalidRequest('The Authorization header is not valid HTTP Basic.')
    }
  }
  if (!inBody) return null
  if (typeof body.client_id !== 'string' || typeof body.client_secret !== 'string') {
    throw invalidRequest('client_id and client_secret must each be given once.')
  }
  return { clientId: body.client_id, clientSecret: body.client_secret }
}

/** A body the schema refuses, except for grant_type's absence or value: those get §5.2's codes below. */
export function malformed(request: FastifyRequest): boolean {
  const errors: { instancePath: string; keyword: string; params: Record<string, unknown> }[] =
    request.validationError?.validation ?? []
  return errors.some(
    (e) =>
      !(e.instancePath === '/grant_type' && e.keyword === 'enum') &&
      e.params.missingProperty !== 'grant_type',
  )
}
