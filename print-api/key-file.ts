import { createPrivateKey, generateKeyPairSync, type KeyObject, randomBytes } from 'node:crypto'
import {
  chmodSync,
  closeSync,
  existsSync,
  fsyncSync,
  linkSync,
  openSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs'

/**
 * A key kept in a file of its own, made on first use with mode 0600 (by `make`), and its text. The key is
 * written whole to a file of this process's, synced, and linked into place: link(2) fails when the name
 * exists, so of two processes starting at once on one directory the second reads the first's key, and never
 * a file the first has created but not yet written (a second cloud node once read an empty key that way).
 */
export function keyFileText(file: string, make: () => string): string {
  if (!existsSync(file)) {
    const temp = `${file}.${process.pid}.${randomBytes(6).toString('hex')}.part`
    const fd = openSync(temp, 'wx', 0o600)
    try {
      writeFileSync(fd, make())
      fsyncSync(fd)
    } finally {
      closeSync(fd)
    }
    try {
      linkSync(temp, file)
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error // another process made it first
    } finally {
      rmSync(temp, { force: true })
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
