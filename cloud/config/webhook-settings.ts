import { Type } from 'typebox'

/** Webhooks (docs/webhooks.md): the key that seals endpoints' signing secrets at rest. */
export const WEBHOOK_SETTINGS = {
  webhookSecretKey: Type.String({
    pattern: '^$|^[A-Za-z0-9+/]{43}=$',
    env: 'WEBHOOK_SECRET_KEY',
    default: '',
    description:
      'key sealing webhook signing secrets (32 bytes in base64: openssl rand -base64 32); the same on every ' +
      'node of one database; unset (default): DATA_DIR/webhook-secret.key, made on first use',
  }),
}
