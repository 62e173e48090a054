import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto'
import path from 'node:path'
import { keyFileText } from '../../print-api/key-file.ts'

/**
 * Webhook signing secrets at rest. A signing secret cannot be stored hashed (the cloud needs it to sign), so
 * it is sealed with AES-256-GCM under a key that is not in the database: WEBHOOK_SECRET_KEY (32 bytes, base64),
 * or else a key file made once in DATA_DIR. Several nodes on one database must share the key
 * (docs/webhooks.md). A sealed secret is `v1.` + base64(12-byte IV ‖ ciphertext ‖ 16-byte tag); the endpoint's
 * id is the additional data, so a sealed secret copied to another endpoint's row does not open.
 */
export interface WebhookSecretBox {
  seal(secret: string, endpointId: string): string
  /** Throws when the key is not the one it was sealed with, or the row was tampered with. */
  open(sealed: string, endpointId: string): string
}

export const WEBHOOK_KEY_FILE = 'webhook-secret.key'

/** A new signing secret as Standard Webhooks writes them: `whsec_` and 32 random bytes in base64. */
export function newWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`
}

export function webhookSecretBox(key: Buffer): WebhookSecretBox {
  if (key.length !== 32) throw new Error('the webhook secret key must be 32 bytes')
  return {
    seal(secret, endpointId) {
      const iv = randomBytes(12)
      const cipher = createCipheriv('aes-256-gcm', key, iv)
      cipher.setAAD(Buffer.from(endpointId))
      const sealed = Buffer.concat([iv, cipher.update(secret, 'utf8'), cipher.final(), cipher.getAuthTag()])
      return `v1.${sealed.toString('base64')}`
    },
    open(sealed, endpointId) {
      if (!sealed.startsWith('v1.')) throw new Error('not a sealed webhook secret')
      const bytes = Buffer.from(sealed.slice(3), 'base64')
      const decipher = createDecipheriv('aes-256-gcm', key, bytes.subarray(0, 12))
      decipher.setAAD(Buffer.from(endpointId))
      decipher.setAuthTag(bytes.subarray(bytes.length - 16))
      return Buffer.concat([
        decipher.update(bytes.subarray(12, bytes.length - 16)),
        decipher.final(),
      ]).toString('utf8')
    },
  }
}

/**
 * `box.open`, remembering the last `max` secrets it opened. The delivery worker signs every attempt, and an
 * AES-GCM decipher per attempt was 2 % of a node's CPU while it delivered beside dispatch (docs/performance.md).
 * A rotated secret is another sealed text and is opened anew; a secret that does not open is not remembered.
 */
export function rememberingOpen(
  box: Pick<WebhookSecretBox, 'open'>,
  max = 1024,
): (sealed: string, endpointId: string) => string {
  const opened = new Map<string, string>()
  return (sealed, endpointId) => {
    const key = `${endpointId} ${sealed}`
    const known = opened.get(key)
    if (known !== undefined) return known
    const secret = box.open(sealed, endpointId)
    // A Map iterates in insertion order: the first key is the one opened longest ago.
    if (opened.size >= max) opened.delete(opened.keys().next().value as string)
    opened.set(key, secret)
    return secret
  }
}

/**
 * The key: WEBHOOK_SECRET_KEY when set (base64 of 32 bytes), else DATA_DIR/webhook-secret.key, made on first
 * use with mode 0600.
 */
export function webhookSecretKey(configured: string | undefined, dataDir: string): Buffer {
  if (configured) {
    const key = Buffer.from(configured, 'base64')
    if (key.length !== 32)
      throw new Error('WEBHOOK_SECRET_KEY must be 32 bytes in base64 (openssl rand -base64 32)')
    return key
  }
  const file = path.join(dataDir, WEBHOOK_KEY_FILE)
  const key = Buffer.from(keyFileText(file, () => randomBytes(32).toString('base64')).trim(), 'base64')
  if (key.length !== 32) throw new Error(`${file} does not hold 32 bytes in base64`)
  return key
}
