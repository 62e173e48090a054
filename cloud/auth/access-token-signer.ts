import { createPublicKey, type KeyObject, randomBytes } from 'node:crypto'
import { calculateJwkThumbprint, exportJWK, SignJWT } from 'jose'
import type { Scope } from '../../protocol/enums.ts'
import type { TokenKey, TokenKeySet } from '../../protocol/lan-credentials.ts'

export interface AccessTokenClaims {
  accountId: string
  clientId: string
  scopes: readonly Scope[]
}

/** Signs the cloud's access tokens and publishes the key that checks them. */
export interface AccessTokenSigner {
  /** The `iss` of every token: the cloud's PUBLIC_URL. */
  readonly issuer: string
  /** RFC 7517 §5: the public keys, for GET /.well-known/jwks.json and the hubs. */
  readonly keySet: TokenKeySet
  /** An RFC 9068 JWT access token issued at `nowMs`, lasting `ttlSeconds`. */
  sign(claims: AccessTokenClaims, ttlSeconds: number, nowMs: number): Promise<string>
}

/** RFC 8037 §2: the public JWK of an Ed25519 key, named by its RFC 7638 thumbprint. */
async function tokenKeyOf(privateKey: KeyObject): Promise<TokenKey> {
  const { kty, crv, x } = await exportJWK(createPublicKey(privateKey))
  if (kty !== 'OKP' || crv !== 'Ed25519' || x === undefined) throw new Error('not an Ed25519 key')
  const kid = await calculateJwkThumbprint({ kty, crv, x })
  return { kty: 'OKP', crv: 'Ed25519', x, kid, alg: 'EdDSA', use: 'sig' }
}

export async function accessTokenSigner(privateKey: KeyObject, issuer: string): Promise<AccessTokenSigner> {
  const key = await tokenKeyOf(privateKey)
  return {
    issuer,
    keySet: { keys: [key] },
    sign({ accountId, clientId, scopes }, ttlSeconds, nowMs) {
      const issuedAt = Math.floor(nowMs / 1000)
      // RFC 9068 §2.2: iss, exp, aud, sub, client_id, iat and jti are required. `aud` is the issuer: the print
      // API, which the cloud serves and each hub serves on its LAN. The caller never names a resource.
      return new SignJWT({ client_id: clientId, account_id: accountId, scope: scopes.join(' ') })
        .setProtectedHeader({ alg: 'EdDSA', typ: 'at+jwt', kid: key.kid })
        .setIssuer(issuer)
        .setAudience(issuer)
        .setSubject(clientId)
        .setJti(randomBytes(16).toString('base64url'))
        .setIssuedAt(issuedAt)
        .setExpirationTime(issuedAt + ttlSeconds)
        .sign(privateKey)
    },
  }
}
