import { generateKeyPairSync } from 'node:crypto'
import { mkdirSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { keyIdOf, publicKeyPem } from './catalog.ts'

/**
 * A new release key (`ota keygen --out DIR`): DIR/release-key.pem (Ed25519, PKCS#8, mode 0600) and
 * DIR/release-key.pub.pem. It never overwrites a key already there.
 */
export function writeReleaseKey(dir: string) {
  mkdirSync(dir, { recursive: true, mode: 0o700 })
  const { privateKey, publicKey } = generateKeyPairSync('ed25519')
  const privateFile = path.join(dir, 'release-key.pem')
  const publicFile = path.join(dir, 'release-key.pub.pem')
  // 'wx': never overwrite a release key.
  writeFileSync(privateFile, privateKey.export({ type: 'pkcs8', format: 'pem' }), {
    mode: 0o600,
    flag: 'wx',
  })
  writeFileSync(publicFile, publicKeyPem(publicKey), { mode: 0o644, flag: 'wx' })
  return { key_id: keyIdOf(publicKey), private_key_file: privateFile, public_key_file: publicFile }
}
