import { createPrivateKey, generateKeyPairSync, type KeyObject } from 'node:crypto'
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs'

/**
 * A key kept in a file of its own, made on first use with mode 0600 (by `make`), and its text. The file is
 * created exclusively, so of two processes starting at once on one directory the second reads the first's.
 */
export function keyFileText(file: string, make: () => string): string {
  if (!existsSync(file)) {
    try {
      writeFileSync(file, make(), { mode: 0o600, flag: 'wx' })
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error // another process made it first
    }
  }
  chmodSync(file, 0o600)
  return readFileSync(file, 'utf8')
}

/** A new Ed25519 private key (RFC 8037), as PKCS#8 PEM. */
export function newEd25519Pem(): string {
  return generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }).toString()
}

/** An Ed25519 private key from PKCS#8 PEM text; throws `why` when the text is not one. */
export function ed25519PrivateKey(pem: string, why: string): KeyObject {
  let key: KeyObject
  try {
    key = createPrivateKey({ key: pem, format: 'pem' })
  } catch {
    throw new Error(why)
  }
  if (key.asymmetricKeyType !== 'ed25519') throw new Error(why)
  return key
}
