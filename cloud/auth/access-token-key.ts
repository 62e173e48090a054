import { createPrivateKey, generateKeyPairSync, type KeyObject } from 'node:crypto'
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs'
import path from 'node:path'

export const ACCESS_TOKEN_KEY_FILE = 'access-token-signing.key'

const HOW_TO_MAKE = 'openssl genpkey -algorithm ed25519 | base64 -w0'

/** An Ed25519 private key from PKCS#8 PEM text; throws `why` when the text is not one. */
function ed25519PrivateKey(pem: string, why: string): KeyObject {
  let key: KeyObject
  try {
    key = createPrivateKey({ key: pem, format: 'pem' })
  } catch {
    throw new Error(why)
  }
  if (key.asymmetricKeyType !== 'ed25519') throw new Error(why)
  return key
}

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
  if (!existsSync(file)) {
    const { privateKey } = generateKeyPairSync('ed25519')
    try {
      writeFileSync(file, privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600, flag: 'wx' })
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error // another process made it first
    }
  }
  chmodSync(file, 0o600)
  return ed25519PrivateKey(
    readFileSync(file, 'utf8'),
    `${file} does not hold an Ed25519 private key in PKCS#8 PEM; move it away to make a new one`,
  )
}
