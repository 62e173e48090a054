import type { Scope } from '../protocol/enums.ts'
import { ApiError } from './api-error.ts'

/** RFC 6750 §1.1 b64token. */
export const BEARER = /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i

export const REALM = 'realm="print-hub"'

/** RFC 6750 §3: a request without credentials gets the challenge alone; a bad token gets error="invalid_token". */
export function unauthorized(
  description: string | null,
  code: 'invalid_token' | 'assertion_invalid' | 'assertion_replayed' = 'invalid_token',
): ApiError {
  const what = code === 'invalid_token' ? 'access token' : 'application assertion'
  const message =
    description === null ? `A bearer ${what} is required.` : `The ${what} is refused: ${description}.`
  // error_description is ASCII without quotes or backslashes (RFC 6750 §3).
  const challenge =
    description === null
      ? `Bearer ${REALM}`
      : `Bearer ${REALM}, error="invalid_token", error_description="${message.replace(/[^\x20-\x21\x23-\x5b\x5d-\x7e]/g, '')}"`
  return new ApiError(code, message, undefined, { 'www-authenticate': challenge })
}

export function requireScopes(auth: { scopes: readonly Scope[] }, required: readonly Scope[]): void {
  const missing = required.filter((scope) => !auth.scopes.includes(scope))
  if (missing.length === 0) return
  throw new ApiError(
    'insufficient_scope',
    `The access token lacks the scope ${missing.join(' and ')}.`,
    { required_scopes: required, missing_scopes: missing },
    { 'www-authenticate': `Bearer ${REALM}, error="insufficient_scope", scope="${required.join(' ')}"` },
  )
}
