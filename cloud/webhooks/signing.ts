import { Webhook } from 'standardwebhooks'

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
  const signatures = secrets.map((secret) => new Webhook(secret).sign(messageId, at, body))
  return {
    'webhook-id': messageId,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': signatures.join(' '),
  }
}
