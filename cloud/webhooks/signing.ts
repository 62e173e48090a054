import { createHmac } from 'node:crypto'

/** The three headers of a Standard Webhooks delivery (spec, "Signature scheme"). */
export interface WebhookSignatureHeaders {
  'webhook-id': string
  'webhook-timestamp': string
  'webhook-signature': string
}

/**
 * Signs one attempt of a delivery. `webhook-id` is the event id (the same on every retry, so that receivers
 * deduplicate on it); `webhook-timestamp` is the attempt's time in whole seconds, since receivers refuse a
 * timestamp more than five minutes away from their clock. `webhook-signature` holds one `v1,<base64>` per
 * secret, space-separated (spec: "a list of signatures ... delimited by spaces", so that a receiver holding
 * either secret of a rotation verifies it): the current secret first, then the previous one.
 */
export function signDelivery(
  messageId: string,
  body: string,
  secrets: readonly string[],
  at: Date,
): WebhookSignatureHeaders {
  if (secrets.length === 0) throw new Error('a webhook delivery needs at least one secret')
  const timestamp = String(Math.floor(at.getTime() / 1000))
  const signatures = secrets.map((secret) => signature(secret, `${messageId}.${timestamp}.${body}`))
  return {
    'webhook-id': messageId,
    'webhook-timestamp': timestamp,
    'webhook-signature': signatures.join(' '),
  }
}

const SECRET_PREFIX = 'whsec_'

/**
 * `v1,` and the base64 HMAC-SHA256 of the signed content under the secret's bytes (spec, "Signature scheme"),
 * by Node's OpenSSL: the standardwebhooks library computes it in JavaScript, 2 % of a node's CPU while it
 * delivered beside dispatch (docs/performance.md). The tests verify these signatures with that library.
 */
function signature(secret: string, content: string): string {
  const key = Buffer.from(
    secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret,
    'base64',
  )
  if (key.length === 0) throw new Error('a webhook secret cannot be empty')
  return `v1,${createHmac('sha256', key).update(content).digest('base64')}`
}
