import {
  copyFileSync,
  existsSync,
  mkdirSync,
  readFileSync,
  renameSync,
  statSync,
  writeFileSync,
} from 'node:fs'
import path from 'node:path'
import { Value } from 'typebox/value'
import { MANIFEST, type ReleaseManifest, sha256File } from './build.ts'
import {
  CATALOG_FILE,
  type Catalog,
  CatalogError,
  compareVersionsDescending,
  Installer,
  installerPath,
  keyIdOf,
  parseSignedCatalog,
  publicKeyPem,
  RELEASE_KEY_FILE,
  RELEASE_VERSION,
  RELEASES_DIR,
  type Release,
  readPrivateKey,
  readPublicKey,
  signCatalog,
  verifyCatalog,
} from './catalog.ts'

export interface PublishOptions {
  /** A directory written by `ota build`. */
  fromDir: string
  /** The cloud's DATA_DIR. */
  dataDir: string
  /** The release key's private half (PEM); it is never written anywhere. */
  privateKeyPem: string
  /** Release notes; kept from an earlier publish of the same version when not given. */
  notes?: string
  now?: Date
}

/** Writes `data` to `file` through a temporary file and a rename, so that readers see old or new, whole. */
function writeAtomically(file: string, data: string): void {
  const temporary = `${file}.${process.pid}.tmp`
  writeFileSync(temporary, data, { mode: 0o644 })
  renameSync(temporary, file)
}

/** The release in `fromDir`, each installer checked against its size and SHA-256. */
async function readBuiltRelease(fromDir: string): Promise<ReleaseManifest> {
  const file = path.join(fromDir, MANIFEST)
  if (!existsSync(file))
    throw new CatalogError(`${fromDir} has no ${MANIFEST}: pass a directory ota build wrote`)
  const manifest = JSON.parse(readFileSync(file, 'utf8')) as ReleaseManifest
  if (typeof manifest.version !== 'string' || !RELEASE_VERSION.test(manifest.version))
    throw new CatalogError(`${file}: version is not X.Y.Z`)
  if (!Array.isArray(manifest.installers) || manifest.installers.length === 0)
    throw new CatalogError(`${file}: no installers`)
  for (const installer of manifest.installers) {
    if (!Value.Check(Installer, installer)) throw new CatalogError(`${file}: an installer is malformed`)
    const built = path.join(fromDir, installer.filename)
    if (!existsSync(built)) throw new CatalogError(`${installer.filename} is missing from ${fromDir}`)
    if (statSync(built).size !== installer.size_bytes || (await sha256File(built)) !== installer.sha256)
      throw new CatalogError(`${installer.filename} does not match its size and SHA-256 in ${MANIFEST}`)
  }
  return manifest
}

/**
 * Adds the release built in `fromDir` to the catalog of the cloud in `dataDir` and makes it current: copies
 * its installers to DATA_DIR/releases/<version>/, then signs and swaps in the new catalog (one rename). The
 * same version published again from another architecture's build adds its installers to that release.
 */
export async function publishRelease(options: PublishOptions): Promise<Catalog> {
  const privateKey = readPrivateKey(options.privateKeyPem)
  const publicPem = publicKeyPem(privateKey)
  const keyId = keyIdOf(readPublicKey(publicPem))
  const built = await readBuiltRelease(options.fromDir)
  const releasesDir = path.join(options.dataDir, RELEASES_DIR)
  mkdirSync(releasesDir, { recursive: true })

  const keyFile = path.join(releasesDir, RELEASE_KEY_FILE)
  if (existsSync(keyFile)) {
    const known = keyIdOf(readPublicKey(readFileSync(keyFile)))
    if (known !== keyId)
      throw new CatalogError(
        `this cloud's catalog is signed by release key ${known}, not ${keyId}: hubs trust only the key in their package`,
      )
  } else {
    writeAtomically(keyFile, publicPem)
  }

  const catalogFile = path.join(releasesDir, CATALOG_FILE)
  let releases: Release[] = []
  if (existsSync(catalogFile)) {
    const stored = parseSignedCatalog(readFileSync(catalogFile, 'utf8'))
    releases = verifyCatalog(stored, readPublicKey(publicPem)).releases
  }

  const now = (options.now ?? new Date()).toISOString()
  const earlier = releases.find((r) => r.version === built.version)
  const installers = [...(earlier?.installers ?? [])]
  for (const installer of built.installers) {
    const known = installers.find((i) => i.filename === installer.filename)
    if (known && known.sha256 !== installer.sha256)
      throw new CatalogError(
        `${installer.filename} is already published with other bytes: build a new version`,
      )
    if (!known) installers.push(installer)
  }
  const others = releases.filter((r) => r.version !== built.version)
  const taken = new Set(others.flatMap((r) => r.installers.map((i) => i.filename)))
  for (const installer of installers)
    if (taken.has(installer.filename))
      throw new CatalogError(`${installer.filename} already belongs to another release`)
  const release: Release = {
    version: built.version,
    released_at: earlier?.released_at ?? now,
    notes: options.notes ?? earlier?.notes ?? '',
    installers,
  }

  // The files first: a catalog never names an installer the cloud cannot serve.
  mkdirSync(path.join(releasesDir, built.version), { recursive: true })
  for (const installer of built.installers) {
    const target = installerPath(releasesDir, built.version, installer.filename)
    if (existsSync(target) && statSync(target).size === installer.size_bytes) {
      if ((await sha256File(target)) === installer.sha256) continue
    }
    const temporary = `${target}.${process.pid}.tmp`
    copyFileSync(path.join(options.fromDir, installer.filename), temporary)
    renameSync(temporary, target)
  }

  const catalog: Catalog = {
    catalog_version: 1,
    published_at: now,
    key_id: keyId,
    current: release,
    releases: [...others, release].sort((a, b) => compareVersionsDescending(a.version, b.version)),
  }
  const signed = signCatalog(catalog, privateKey)
  writeAtomically(catalogFile, `${JSON.stringify(signed)}\n`)
  return catalog
}
