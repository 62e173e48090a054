import { type Static, Type } from 'typebox'
import { Scope } from './enums.ts'
import { Printer } from './printer.ts'

/** RFC 7517 §4 / RFC 8037 §2: an Ed25519 public key that checks the cloud's access tokens. */
export const TokenKey = Type.Object(
  {
    kty: Type.Literal('OKP'),
    crv: Type.Literal('Ed25519'),
    x: Type.String({ pattern: '^[A-Za-z0-9_-]{43}$', description: 'the public key, base64url' }),
    kid: Type.String({ minLength: 1, description: 'RFC 7638 JWK thumbprint of the key' }),
    alg: Type.Literal('EdDSA'),
    use: Type.Literal('sig'),
  },
  { title: 'TokenKey' },
)
export type TokenKey = Static<typeof TokenKey>

/** RFC 7517 §5: GET /.well-known/jwks.json, the keys the cloud's access tokens (RFC 9068) are signed with. */
export const TokenKeySet = Type.Object({ keys: Type.Array(TokenKey) }, { title: 'TokenKeySet' })
export type TokenKeySet = Static<typeof TokenKeySet>

/** An API client of the hub's account that may print on the hub's LAN. */
export const LanClient = Type.Object(
  {
    client_id: Type.String({ format: 'uuid' }),
    scopes: Type.Array(Scope),
    secret_sha256: Type.String({
      pattern: '^[0-9a-f]{64}$',
      description: "SHA-256 of the client's secret, in hex, as the cloud stores it",
    }),
  },
  { title: 'LanClient' },
)
export type LanClient = Static<typeof LanClient>

/**
 * GET /agent-api/v1/lan-credentials: what a hub needs to serve the print API on its LAN (docs/lan-printing.md)
 * while it cannot reach the cloud: whether it may, its printers as the cloud shows them, and what it checks its
 * account's credentials with. The hub keeps the latest one it fetched.
 */
export const LanCredentialsDocument = Type.Object(
  {
    lan_api_enabled: Type.Boolean({
      description:
        'whether the hub serves the print API on its LAN (off unless enabled for the hub); when false, no ' +
        'client is listed',
    }),
    printers: Type.Array(Printer, { description: 'the hub’s printers as GET /api/v1/printers shows them' }),
    issuer: Type.String({ minLength: 1, description: 'the `iss` of the cloud’s access tokens (PUBLIC_URL)' }),
    token_keys: TokenKeySet,
    clients: Type.Array(LanClient, { description: 'every live API client of the hub’s account' }),
    access_token_ttl_seconds: Type.Optional(
      Type.Integer({
        minimum: 1,
        description: 'lifetime of a token the hub issues itself; 3600 when absent',
      }),
    ),
    generated_at: Type.String({ format: 'date-time' }),
  },
  { title: 'LanCredentials' },
)
export type LanCredentialsDocument = Static<typeof LanCredentialsDocument>
