import { createPublicKey, type KeyObject } from 'node:crypto'
import { calculateJwkThumbprint, type JWK } from 'jose'
import type { ApplicationKey } from '../storage/applications.ts'

/** RFC 7518 §3.3: RS256 keys are RSA keys of at least 2048 bits. */
const MIN_RSA_BITS = 2048

/**
 * An application's RS256 public key from a file's text: a PEM public key (SPKI, or PKCS#1 "RSA PUBLIC KEY")
 * or a JWK (JSON). Stored as a public JWK; its `kid` is the key's own, else its RFC 7638 thumbprint.
 * Throws a one-line reason for anything else (a private key is refused: the cloud never holds one).
 */
export async function applicationKeyFrom(text: string): Promise<ApplicationKey> {
  const trimmed = text.trim()
  let key: KeyObject
  let ownKid: unknown
  if (trimmed.startsWith('{')) {
    let jwk: JWK
    try {
      jwk = JSON.parse(trimmed) as JWK
    } catch {
      throw new Error('the key file is neither PEM nor JSON (JWK)')
    }
    if (jwk.d !== undefined) throw new Error('the JWK holds a private key; give the public key only')
    if (jwk.alg !== undefined && jwk.alg !== 'RS256') throw new Error(`the JWK is for ${jwk.alg}, not RS256`)
    ownKid = jwk.kid
    try {
      key = createPublicKey({ key: jwk as import('node:crypto').JsonWebKey, format: 'jwk' })
    } catch (error) {
      throw new Error(`the JWK is not a public key (${(error as Error).message})`)
    }
  } else {
    if (/PRIVATE KEY/.test(trimmed)) throw new Error('the file holds a private key; give the public key only')
    try {
      key = createPublicKey(trimmed)
    } catch (error) {
      throw new Error(`the file holds no PEM public key (${(error as Error).message})`)
    }
  }
  if (key.asymmetricKeyType !== 'rsa') {
    throw new Error(`RS256 needs an RSA key, not ${key.asymmetricKeyType ?? 'this key'}`)
  }
  const bits = key.asymmetricKeyDetails?.modulusLength ?? 0
  if (bits < MIN_RSA_BITS)
    throw new Error(`the RSA key has ${bits} bits; RS256 needs at least ${MIN_RSA_BITS}`)
  const { n, e } = key.export({ format: 'jwk' })
  const jwk: JWK = { kty: 'RSA', n, e }
  if (ownKid !== undefined && (typeof ownKid !== 'string' || !/^[\x20-\x7e]{1,200}$/.test(ownKid))) {
    throw new Error('the JWK kid must be 1 to 200 printable ASCII characters')
  }
  const kid = typeof ownKid === 'string' ? ownKid : await calculateJwkThumbprint(jwk)
  return { kid, jwk: { ...jwk, kid, alg: 'RS256', use: 'sig' } }
}
