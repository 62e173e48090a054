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
import type { ServedCatalogRepository } from '../storage/served-catalogs.ts'

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
 * signature check is unavailable, and so is one older than a catalog this cloud served before (a lower
 * serial, or the same serial with other contents: the database keeps the highest served). The verified
 * catalog is kept until either file changes (size, time or inode: `ota publish` swaps files by rename), so
 * each request costs two stat calls, and none for a caller that accepts an answer up to `maxAgeMs` old (each
 * hub's state report asks, and a stat costs as much as a small database query on a busy node).
 */
export class ReleaseCatalog {
  readonly #dir: string
  readonly #served: ServedCatalogRepository
  #cached: { stamp: string; served: ServedCatalog } | undefined
  /** The latest check of the files: when, and what it answered. */
  #checked: { at: number; answer: Promise<ServedCatalog> } | undefined

  constructor(releasesDir: string, served: ServedCatalogRepository) {
    this.#dir = releasesDir
    this.#served = served
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
    this.#cached = undefined
    const [stored, keyPem] = await Promise.all([readFile(catalogFile, 'utf8'), readFile(keyFile)])
    let catalog: Catalog
    let signed: ReturnType<typeof parseSignedCatalog>
    try {
      signed = parseSignedCatalog(stored)
      catalog = verifyCatalog(signed, readPublicKey(keyPem))
    } catch (error) {
      if (error instanceof CatalogError) throw new CatalogUnavailable(error.message)
      throw new CatalogUnavailable('the release key is unreadable')
    }
    const hash = createHash('sha256').update(signed.text).digest()
    await this.#refuseOlder(catalog, hash.toString('hex'))
    const installers = new Map<string, { installer: Installer; file: string }>()
    for (const release of catalog.releases) {
      for (const installer of release.installers) {
        installers.set(installer.filename, {
          installer,
          file: installerPath(this.#dir, release.version, installer.filename),
        })
      }
    }
    const digest = hash.toString('base64url').slice(0, 32)
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

  /** Throws CatalogUnavailable when `catalog` is older than one served before; records it otherwise. */
  async #refuseOlder(catalog: Catalog, sha256: string): Promise<void> {
    const { serial, key_id: keyId } = catalog
    const served =
      serial === undefined
        ? await this.#served.highest(keyId)
        : await this.#served.recordServed(keyId, { serial, sha256 })
    if (!served) return
    const fix = `re-sign with ota resign --serial ${served.serial + 1}`
    if (serial === undefined)
      throw new CatalogUnavailable(
        `the catalog has no serial, and this cloud has served serial ${served.serial}: an older catalog was put back (restore the newer one, or ${fix})`,
      )
    if (serial < served.serial)
      throw new CatalogUnavailable(
        `the catalog has serial ${serial}, lower than serial ${served.serial} this cloud has served: an older catalog was put back (restore the newer one, or ${fix})`,
      )
    if (served.sha256 !== sha256)
      throw new CatalogUnavailable(
        `the catalog has serial ${serial}, as the one this cloud has served, but other contents: it was signed over an older catalog (${fix})`,
      )
  }
}
