import { type Static, Type } from 'typebox'

const BodyCredential = (description: string) =>
  Type.Optional(Type.String({ description: `${description}; required unless sent with HTTP Basic (§2.3.1)` }))

/**
 * RFC 6749 §4.4.2 access token request; client credentials in the body (§2.3.1) or HTTP Basic. The cloud
 * answers a missing or other grant_type with §5.2's own codes, after authenticating the client.
 */
export const TokenRequest = Type.Object({
  grant_type: Type.Enum(['client_credentials'], { type: 'string' }),
  client_id: BodyCredential('the API client id'),
  client_secret: BodyCredential("the API client's secret"),
  scope: Type.Optional(Type.String({ description: 'space-delimited subset of the client scopes (§3.3)' })),
})
export type TokenRequest = Static<typeof TokenRequest>

/** RFC 6749 §5.1 successful response. */
export const TokenResponse = Type.Object(
  {
    access_token: Type.String(),
    token_type: Type.Literal('Bearer'),
    expires_in: Type.Integer({
      minimum: 1,
      description: 'seconds; 3600 by default (ACCESS_TOKEN_TTL_SECONDS)',
    }),
    scope: Type.String(),
  },
  { title: 'TokenResponse', additionalProperties: false },
)
export type TokenResponse = Static<typeof TokenResponse>
