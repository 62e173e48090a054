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
 * inode: `ota publish` swaps files by rename), so each request costs two stat calls.
 */
export class ReleaseCatalog {
  readonly #dir: string
  #cached: { stamp: string; served: ServedCatalog } | undefined

  constructor(releasesDir: string) {
    this.#dir = releasesDir
  }

  async current(): Promise<ServedCatalog> {
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
