import { createPublicKey, type KeyObject } from 'node:crypto'
import path from 'node:path'
import { calculateJwkThumbprint, exportJWK } from 'jose'
import { ed25519PrivateKey, keyFileText, newEd25519Pem } from '../../print-api/key-file.ts'

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
  const privateKey = ed25519PrivateKey(
    keyFileText(file, newEd25519Pem),
    `${file} does not hold an Ed25519 key`,
  )
  const publicKey = createPublicKey(privateKey)
  const { kty, crv, x } = await exportJWK(publicKey)
  return { privateKey, publicKey, kid: await calculateJwkThumbprint({ kty, crv, x }) }
}
