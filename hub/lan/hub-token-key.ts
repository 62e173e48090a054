import { createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject } from 'node:crypto'
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { calculateJwkThumbprint, exportJWK } from 'jose'

export const HUB_TOKEN_KEY_FILE = 'lan-token-signing.key'

/** The hub's own Ed25519 key (RFC 8037), which signs the tokens it issues on its LAN; only this hub checks them. */
export interface HubTokenKey {
  privateKey: KeyObject
  publicKey: KeyObject
  /** RFC 7638 JWK thumbprint of the public key. */
  kid: string
}

/** `dataDir/lan-token-signing.key` (PKCS#8 PEM), made on first use with mode 0600. */
export async function hubTokenKey(dataDir: string): Promise<HubTokenKey> {
  const file = path.join(dataDir, HUB_TOKEN_KEY_FILE)
  if (!existsSync(file)) {
    const { privateKey } = generateKeyPairSync('ed25519')
    try {
      writeFileSync(file, privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600, flag: 'wx' })
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error // made meanwhile
    }
  }
  chmodSync(file, 0o600)
  const privateKey = createPrivateKey(readFileSync(file, 'utf8'))
  if (privateKey.asymmetricKeyType !== 'ed25519') throw new Error(`${file} does not hold an Ed25519 key`)
  const publicKey = createPublicKey(privateKey)
  const { kty, crv, x } = await exportJWK(publicKey)
  return { privateKey, publicKey, kid: await calculateJwkThumbprint({ kty, crv, x }) }
}
