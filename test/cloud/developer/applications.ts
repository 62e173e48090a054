import { createSign, KeyObject, randomUUID } from 'node:crypto'
import { type CryptoKey, exportJWK, generateKeyPair, type JWTPayload, SignJWT } from 'jose'
import { applicationKeyFrom } from '../../../cloud/developer/public-keys.ts'
import type { Storage } from '../../../cloud/storage/storage.ts'

export interface RsaKeyPair {
  privateKey: CryptoKey
  publicKey: CryptoKey
}

/** A fresh RS256 key pair (2048 bits), generated in the test. */
export const rsaKeyPair = (): Promise<RsaKeyPair> => generateKeyPair('RS256', { extractable: true })

export interface TestApplication {
  appId: string
  keys: RsaKeyPair
  kid: string
  /**
   * A fresh assertion: RS256 with this application's key and kid, iss = app id, aud = `audience`, iat = now,
   * exp = now + 300 s, a random jti; `claims` and `header` override any of it (undefined removes a claim).
   */
  assertion(
    claims?: Partial<Record<keyof JWTPayload, unknown>>,
    header?: Record<string, unknown>,
  ): Promise<string>
}

/** Registers an application with a generated key, as `cloud app create` does, straight through storage. */
export async function registerApplication(
  storage: Storage,
  audience: string,
  options: { partner?: boolean; name?: string } = {},
): Promise<TestApplication> {
  const keys = await rsaKeyPair()
  const key = await applicationKeyFrom(JSON.stringify(await exportJWK(keys.publicKey)))
  const application = await storage.applications.create(options.name ?? 'Test app', options.partner ?? false)
  await storage.applications.addKey(application.app_id, key)
  return {
    appId: application.app_id,
    keys,
    kid: key.kid,
    assertion: (claims = {}, header = {}) =>
      signAssertion(
        keys.privateKey,
        { kid: key.kid, ...header },
        {
          iss: application.app_id,
          aud: audience,
          ...claims,
        },
      ),
  }
}

/** Signs `claims` (iat, exp and jti filled in unless given) with `privateKey` under RS256. */
export async function signAssertion(
  privateKey: CryptoKey,
  header: Record<string, unknown>,
  claims: Partial<Record<keyof JWTPayload, unknown>>,
): Promise<string> {
  const now = Math.floor(Date.now() / 1000)
  const payload: Record<string, unknown> = { iat: now, exp: now + 300, jti: randomUUID(), ...claims }
  for (const [name, value] of Object.entries(payload)) if (value === undefined) delete payload[name]
  return new SignJWT(payload).setProtectedHeader({ alg: 'RS256', ...header }).sign(privateKey)
}

/**
 * The same assertion as `assertion()`, signed synchronously with node:crypto (for generators that cannot
 * await, such as fast-check arbitraries).
 */
export function assertionSync(app: TestApplication, audience: string): string {
  const now = Math.floor(Date.now() / 1000)
  const part = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url')
  const input = `${part({ alg: 'RS256', kid: app.kid })}.${part({
    iss: app.appId,
    aud: audience,
    iat: now,
    exp: now + 300,
    jti: randomUUID(),
  })}`
  const signature = createSign('RSA-SHA256')
    .update(input)
    .sign(KeyObject.from(app.keys.privateKey), 'base64url')
  return `${input}.${signature}`
}
