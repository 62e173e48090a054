import { createHash } from 'node:crypto'
import { readFile, stat } from 'node:fs/promises'
import path from 'node:path'
import {
  CATALOG_FILE,
  type Catalog,
  CatalogError,
  type Installer,
  installerPath,
  parseSignedCatalog,
  RELEASE_KEY_FILE,
  readPublicKey,
  verifyCatalog,
} from '../../ota/catalog.ts'

/** The catalog as the cloud serves it: the signed text byte for byte, its signature and what it names. */
export interface ServedCatalog {
  text: string
  /** Ed25519 signature of `text`, Base64. */
  signature: string
  keyId: string
  /** A strong validator of `text` (RFC 9110 §8.8.3). */
  etag: string
  catalog: Catalog
  /** Each installer of every release by file name, with the file that holds it. */
  installers: Map<string, { installer: Installer; file: string }>
}

/** Why the catalog cannot be served; the route answers 503. */
export class CatalogUnavailable extends Error {}

/**
 * The release catalog `ota publish` keeps in DATA_DIR/releases, read from disk and verified with the release
 * key stored beside it before anything of it is served. A catalog that is missing, unreadable or fails its
 * signature check is unavailable. The verified catalog is kept until either file changes (size, time or
 * inode: `ota publish` swaps files by rename), so each request costs two stat calls, and none for a caller that
 * accepts an answer up to `maxAgeMs` old (each hub's state report asks, and a stat costs as much as a small
 * database query on a busy node).
 */
export class ReleaseCatalog {
  readonly #dir: string
  #cached: { stamp: string; served: ServedCatalog } | undefined
  /** The latest check of the files: when, and what it answered. */
  #checked: { at: number; answer: Promise<ServedCatalog> } | undefined

  constructor(releasesDir: string) {
    this.#dir = releasesDir
  }

  /** The catalog as the files hold it now, or as they held it at a check less than `maxAgeMs` ago. */
  current(maxAgeMs = 0): Promise<ServedCatalog> {
    const now = performance.now()
    if (this.#checked && now - this.#checked.at < maxAgeMs) return this.#checked.answer
    const answer = this.#read()
    // Settled either way, so that a caller that accepts an old answer never sees an unhandled rejection.
    answer.catch(() => {})
    this.#checked = { at: now, answer }
    return answer
  }

  async #read(): Promise<ServedCatalog> {
    const catalogFile = path.join(this.#dir, CATALOG_FILE)
    const keyFile = path.join(this.#dir, RELEASE_KEY_FILE)
    const stamps = await Promise.all(
      [catalogFile, keyFile].map((file) =>
        stat(file).then(
          (s) => `${s.ino}:${s.size}:${s.mtimeMs}`,
          () => {
            throw new CatalogUnavailable('no release has been published')
          },
        ),
      ),
    )
    const stamp = stamps.join('/')
    if (this.#cached?.stamp === stamp) return this.#cached.served
    const [stored, keyPem] = await Promise.all([readFile(catalogFile, 'utf8'), readFile(keyFile)])
    let catalog: Catalog
    let signed: ReturnType<typeof parseSignedCatalog>
    try {
      signed = parseSignedCatalog(stored)
      catalog = verifyCatalog(signed, readPublicKey(keyPem))
    } catch (error) {
      this.#cached = undefined
      if (error instanceof CatalogError) throw new CatalogUnavailable(error.message)
      throw new CatalogUnavailable('the release key is unreadable')
    }
    const installers = new Map<string, { installer: Installer; file: string }>()
    for (const release of catalog.releases) {
      for (const installer of release.installers) {
        installers.set(installer.filename, {
          installer,
          file: installerPath(this.#dir, release.version, installer.filename),
        })
      }
    }
    const digest = createHash('sha256').update(signed.text).digest('base64url').slice(0, 32)
    const served: ServedCatalog = {
      text: signed.text,
      signature: signed.signature,
      keyId: catalog.key_id,
      etag: `"${digest}"`,
      catalog,
      installers,
    }
    this.#cached = { stamp, served }
    return served
  }
}
