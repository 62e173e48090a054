import { type TSchema, Type } from 'typebox'

/**
 * The HTTP headers of the public API that no body schema carries (spec: Errors, Limits; docs/printing-api.md: rate limits,
 * idempotency). Requests never fail on them: an unsafe X-Request-Id is replaced, not refused.
 */
export const RequestId = Type.String({
  minLength: 1,
  maxLength: 128,
  pattern: '^[A-Za-z0-9._:-]+$',
  description:
    'Names the request in logs and support cases. A caller may send its own (at most 128 characters of ' +
    '[A-Za-z0-9._:-]); the response echoes it, or a generated UUID in place of any other value.',
})

export const RetryAfter = Type.Integer({ minimum: 1, description: 'Seconds to wait before retrying.' })

/** Set by each quota the request passed (the last one counted), and by the one that refused it (429). */
export const RATE_LIMIT_HEADERS = {
  'X-RateLimit-Limit': Type.Integer({ minimum: 1, description: 'Requests the quota allows per window.' }),
  'X-RateLimit-Remaining': Type.Integer({ minimum: 0, description: 'Requests left in the current window.' }),
  'X-RateLimit-Reset': Type.Integer({
    minimum: 0,
    description: 'When the current window ends, as a Unix time in seconds (UTC).',
  }),
  'X-RateLimit-Scope': Type.Enum(['ip', 'account', 'hub', 'client', 'application', 'installation'], {
    description:
      'The quota: per client address, account, hub, API client at an address (token requests), developer ' +
      'application (its assertions) or app installation (its tokens).',
  }),
} as const satisfies Record<string, TSchema>

export const IdempotentReplayed = Type.Enum(['true'], {
  description: 'Present when this answer replays the one first given to the same Idempotency-Key.',
})

export const ContentSha256 = Type.String({
  pattern: '^[0-9a-f]{64}$',
  description: 'SHA-256 of the bytes, in hex: the hub checks what it downloaded against it.',
})

/** RFC 6749 §5.1: an answer that holds a secret is never cached. */
export const NoStore = Type.Enum(['no-store'], {
  description: 'The answer holds a secret: no cache may keep it.',
})
export const PragmaNoCache = Type.Enum(['no-cache'], { description: 'The same, for HTTP/1.0 caches.' })

export const WwwAuthenticate = Type.String({
  description: 'The challenge (RFC 6750 §3 for bearer tokens, RFC 7617 for HTTP Basic).',
})
