import { generateKeyPairSync, type KeyObject, randomUUID } from 'node:crypto'
import { calculateJwkThumbprint, exportJWK, SignJWT } from 'jose'
import type { TokenKey } from '../../../protocol/lan-credentials.ts'

// Access tokens as the cloud signs them (cloud/auth/access-token-signer.ts), for tests of what a hub accepts.

export interface SigningKey {
  privateKey: KeyObject
  jwk: TokenKey
}

export async function signingKey(): Promise<SigningKey> {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519')
  const { x } = await exportJWK(publicKey)
  const kid = await calculateJwkThumbprint({ kty: 'OKP', crv: 'Ed25519', x: x as string })
  return { privateKey, jwk: { kty: 'OKP', crv: 'Ed25519', x: x as string, kid, alg: 'EdDSA', use: 'sig' } }
}

export interface TokenOptions {
  key: SigningKey
  issuer: string
  clientId: string
  accountId: string
  scope?: string
  header?: Record<string, unknown>
  claims?: Record<string, unknown>
  /** Epoch milliseconds; now by default. */
  issuedAt?: number
  ttlSeconds?: number
}

/** A token as the cloud signs them (cloud/auth/access-token-signer.ts): RFC 9068, EdDSA. */
export function signCloudToken({
  key,
  issuer,
  clientId,
  accountId,
  scope = 'print_jobs:write printers:read',
  header = {},
  claims = {},
  issuedAt = Date.now(),
  ttlSeconds = 3600,
}: TokenOptions): Promise<string> {
  const iat = Math.floor(issuedAt / 1000)
  return new SignJWT({ client_id: clientId, account_id: accountId, scope, ...claims })
    .setProtectedHeader({ alg: 'EdDSA', typ: 'at+jwt', kid: key.jwk.kid, ...header })
    .setIssuer(issuer)
    .setAudience(issuer)
    .setSubject(String(claims.client_id ?? clientId))
    .setJti(randomUUID())
    .setIssuedAt(iat)
    .setExpirationTime(iat + ttlSeconds)
    .sign(key.privateKey)
}
