import { copyFileSync, existsSync, mkdirSync, readFileSync, renameSync, statSync } from 'node:fs'
import path from 'node:path'
import { Value } from 'typebox/value'
import { checkBootTested } from './appliance-record.ts'
import { MANIFEST, type ReleaseManifest, sha256File } from './build.ts'
import {
  type Catalog,
  CatalogError,
  compareVersions,
  Installer,
  installerPath,
  RELEASE_VERSION,
  type Release,
} from './catalog.ts'
import { openCatalogStore, type SigningOptions } from './catalog-store.ts'

export interface PublishOptions extends SigningOptions {
  /** A directory written by `ota build`. */
  fromDir: string
  /** Release notes; kept from an earlier publish of the same version when not given. */
  notes?: string
  /**
   * Publish an arm64 package without a passing appliance boot test record in `fromDir` (appliance-record.ts),
   * and why.
   */
  withoutBootTest?: string
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
 * same version published again from another architecture's build adds its installers to that release. A
 * withdrawn version, or one below the catalog's floor, is refused: hubs must never be offered it again.
 */
export async function publishRelease(options: PublishOptions): Promise<Catalog> {
  const signedAt = options.now ?? new Date()
  const store = openCatalogStore({ ...options, now: signedAt })
  const built = await readBuiltRelease(options.fromDir)
  checkBootTested(options.fromDir, built.version, built.installers, options.withoutBootTest)
  const { releasesDir, stored } = store
  const releases: Release[] = stored?.releases ?? []
  if (stored?.withdrawn?.includes(built.version))
    throw new CatalogError(`release ${built.version} was withdrawn: build a new version`)
  const floor = stored ? (stored.floor ?? releases.at(-1)?.version ?? built.version) : built.version
  if (compareVersions(built.version, floor) < 0)
    throw new CatalogError(
      `release ${built.version} is below the catalog’s floor ${floor}: build a newer version`,
    )

  const now = signedAt.toISOString()
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

  return store.sign({
    floor,
    withdrawn: stored?.withdrawn ?? [],
    current: release,
    releases: [...others, release],
  })
}
