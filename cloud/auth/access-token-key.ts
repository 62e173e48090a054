import type { KeyObject } from 'node:crypto'
import path from 'node:path'
import { ed25519PrivateKey, keyFileText, newEd25519Pem } from '../../print-api/key-file.ts'

export const ACCESS_TOKEN_KEY_FILE = 'access-token-signing.key'

const HOW_TO_MAKE = 'openssl genpkey -algorithm ed25519 | base64 -w0'

/**
 * The key the cloud signs its access tokens with (RFC 8037 EdDSA): ACCESS_TOKEN_SIGNING_KEY when set (the
 * base64 of an Ed25519 private key in PKCS#8 PEM), else DATA_DIR/access-token-signing.key (the PEM), made on
 * first use with mode 0600. Several nodes on one database must share the key: a token one node signed is
 * checked by hubs against the keys any node publishes.
 */
export function accessTokenSigningKey(configured: string | undefined, dataDir: string): KeyObject {
  if (configured) {
    const pem = Buffer.from(configured, 'base64').toString('utf8')
    return ed25519PrivateKey(
      pem,
      `ACCESS_TOKEN_SIGNING_KEY must be an Ed25519 private key, PKCS#8 PEM in base64 (${HOW_TO_MAKE})`,
    )
  }
  const file = path.join(dataDir, ACCESS_TOKEN_KEY_FILE)
  return ed25519PrivateKey(
    keyFileText(file, newEd25519Pem),
    `${file} does not hold an Ed25519 private key in PKCS#8 PEM; move it away to make a new one`,
  )
}
