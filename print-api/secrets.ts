import { createHash, randomBytes, timingSafeEqual } from 'node:crypto'

/**
 * Machine-generated secrets (client secrets, access tokens, enrollment tokens, hub credentials): 256 random
 * bits behind a readable prefix. Stored as SHA-256 digests and compared in constant time (docs/architecture.md: what keeps it safe).
 */
export function generateSecret(prefix: string): string {
  return `${prefix}_${randomBytes(32).toString('base64url')}`
}

export function hashSecret(secret: string): Buffer {
  return createHash('sha256').update(secret, 'utf8').digest()
}

export function secretMatches(candidate: string, storedHash: Buffer): boolean {
  const digest = hashSecret(candidate)
  return digest.length === storedHash.length && timingSafeEqual(digest, storedHash)
}
