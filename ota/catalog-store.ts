import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import {
  CATALOG_FILE,
  type Catalog,
  CatalogError,
  compareVersionsDescending,
  keyIdOf,
  parseSignedCatalog,
  publicKeyPem,
  RELEASE_KEY_FILE,
  RELEASES_DIR,
  readPrivateKey,
  readPublicKey,
  signCatalog,
  verifyCatalog,
} from './catalog.ts'

/** How long a catalog is valid when not told (`--expires-in`), and the longest it may be. */
export const DEFAULT_EXPIRY_DAYS = 30
export const MAX_EXPIRY_DAYS = 366
const DAY_MS = 86_400_000

export interface SigningOptions {
  /** The cloud's DATA_DIR. */
  dataDir: string
  /** The release key's private half (PEM); it is never written anywhere. */
  privateKeyPem: string
  now?: Date
  /** How long hubs accept the catalog (DEFAULT_EXPIRY_DAYS). */
  expiresInDays?: number
}

/** What a signing changes; the rest (format, serial, times, key) the store fills in. */
export type CatalogContent = Pick<Catalog, 'current' | 'releases' | 'floor' | 'withdrawn'>

/** The catalog of one DATA_DIR, as the release key signed it, and the signing of its successor. */
export interface CatalogStore {
  releasesDir: string
  /** The stored catalog, verified; undefined before the first publish. */
  stored: Catalog | undefined
  /** Signs `content` under the next serial (or `serial`, which must be higher) and swaps it in. */
  sign(content: CatalogContent, serial?: number): Catalog
}

/** Writes `data` to `file` through a temporary file and a rename, so that readers see old or new, whole. */
export function writeAtomically(file: string, data: string): void {
  const temporary = `${file}.${process.pid}.tmp`
  writeFileSync(temporary, data, { mode: 0o644 })
  renameSync(temporary, file)
}

/**
 * Opens DATA_DIR/releases for signing: the release key must be the one the catalog was first published with
 * (its public half is stored beside the catalog on the first publish), and the stored catalog must verify.
 */
export function openCatalogStore(options: SigningOptions): CatalogStore {
  const days = options.expiresInDays ?? DEFAULT_EXPIRY_DAYS
  if (!Number.isInteger(days) || days < 1 || days > MAX_EXPIRY_DAYS)
    throw new CatalogError(`the expiry must be 1 to ${MAX_EXPIRY_DAYS} days (got ${days})`)
  const privateKey = readPrivateKey(options.privateKeyPem)
  const publicPem = publicKeyPem(privateKey)
  const publicKey = readPublicKey(publicPem)
  const keyId = keyIdOf(publicKey)
  const releasesDir = path.join(options.dataDir, RELEASES_DIR)
  const keyFile = path.join(releasesDir, RELEASE_KEY_FILE)
  if (existsSync(keyFile)) {
    const known = keyIdOf(readPublicKey(readFileSync(keyFile)))
    if (known !== keyId)
      throw new CatalogError(
        `this cloud's catalog is signed by release key ${known}, not ${keyId}: hubs trust only the key in their package`,
      )
  }
  const catalogFile = path.join(releasesDir, CATALOG_FILE)
  const stored = existsSync(catalogFile)
    ? verifyCatalog(parseSignedCatalog(readFileSync(catalogFile, 'utf8')), publicKey)
    : undefined
  const now = options.now ?? new Date()

  return {
    releasesDir,
    stored,
    sign(content, serial) {
      const storedSerial = stored?.serial ?? 0
      if (serial !== undefined && serial <= storedSerial)
        throw new CatalogError(
          `the serial must be higher than the stored catalog’s ${storedSerial} (got ${serial})`,
        )
      const catalog: Catalog = {
        catalog_version: 1,
        serial: serial ?? storedSerial + 1,
        published_at: now.toISOString(),
        expires_at: new Date(now.getTime() + days * DAY_MS).toISOString(),
        key_id: keyId,
        floor: content.floor,
        withdrawn: [...(content.withdrawn ?? [])].sort(compareVersionsDescending),
        current: content.current,
        releases: [...content.releases].sort((a, b) => compareVersionsDescending(a.version, b.version)),
      }
      const signed = signCatalog(catalog, privateKey)
      // What every reader will check, checked before anything is swapped in.
      verifyCatalog(signed, publicKey)
      mkdirSync(releasesDir, { recursive: true })
      if (!existsSync(keyFile)) writeAtomically(keyFile, publicPem)
      writeAtomically(catalogFile, `${JSON.stringify(signed)}\n`)
      return catalog
    },
  }
}
