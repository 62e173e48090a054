import { createCipheriv, createDecipheriv, createHash, hkdfSync, randomBytes } from 'node:crypto'

/**
 * Replays of partner requests hold secrets (an enrollment token, an onboarding URL) that the spec says a
 * retry returns again. The stored answer is sealed with AES-256-GCM under a key derived (HKDF-SHA256, RFC
 * 5869) from the Idempotency-Key itself, and the record is found by the key's SHA-256 only: the database
 * alone holds neither the secrets nor what opens them; a retry that presents the key opens its answer.
 */
const PREFIX = 'sealed:v1:'
const INFO = 'print-hub idempotent replay v1'

export function idempotencyKeyDigest(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex')
}

function sealingKey(idempotencyKey: string, owner: string): Buffer {
  return Buffer.from(
    hkdfSync('sha256', Buffer.from(idempotencyKey, 'utf8'), Buffer.from(owner, 'utf8'), INFO, 32),
  )
}

export function seal(body: string, idempotencyKey: string, owner: string): string {
  const iv = randomBytes(12)
  const cipher = createCipheriv('aes-256-gcm', sealingKey(idempotencyKey, owner), iv)
  const sealed = Buffer.concat([cipher.update(body, 'utf8'), cipher.final()])
  return `${PREFIX}${Buffer.concat([iv, cipher.getAuthTag(), sealed]).toString('base64')}`
}

/** The sealed body, or null when it was not sealed with this key and owner. */
export function unseal(stored: string, idempotencyKey: string, owner: string): string | null {
  if (!stored.startsWith(PREFIX)) return null
  const bytes = Buffer.from(stored.slice(PREFIX.length), 'base64')
  try {
    const decipher = createDecipheriv('aes-256-gcm', sealingKey(idempotencyKey, owner), bytes.subarray(0, 12))
    decipher.setAuthTag(bytes.subarray(12, 28))
    return Buffer.concat([decipher.update(bytes.subarray(28)), decipher.final()]).toString('utf8')
  } catch {
    return null
  }
}
