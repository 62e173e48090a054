import { type Catalog, CatalogError, compareVersions } from './catalog.ts'
import { openCatalogStore, type SigningOptions } from './catalog-store.ts'

/**
 * Signings of the catalog that publish nothing (docs/hub-updates.md: Rollback, freeze and the other attacks):
 * `ota resign` renews the expiry before hubs refuse the catalog, `ota withdraw` takes releases out of it for
 * good. Both sign under a higher serial, so that the catalog before them is refused by hubs that saw it.
 */

function storedCatalog(options: SigningOptions) {
  const store = openCatalogStore(options)
  if (!store.stored) throw new CatalogError('no catalog to re-sign: publish a release first')
  return { store, stored: store.stored }
}

/** The oldest version the catalog lets hubs run; catalogs signed before floors existed: their oldest release. */
const floorOf = (catalog: Catalog): string =>
  catalog.floor ?? catalog.releases.at(-1)?.version ?? catalog.current.version

/** The same releases, signed again with a new expiry (and `serial`, to jump above one the cloud served). */
export async function resignCatalog(options: SigningOptions & { serial?: number }): Promise<Catalog> {
  const { store, stored } = storedCatalog(options)
  return store.sign(
    {
      floor: floorOf(stored),
      withdrawn: stored.withdrawn ?? [],
      current: stored.current,
      releases: stored.releases,
    },
    options.serial,
  )
}

/**
 * Withdraws `version`, or with `below` every release older than it (raising the floor to it). A withdrawn
 * release leaves the catalog (hubs can no longer download it, pins to it are ignored) and is listed in
 * `withdrawn`, so that it is never published again. When the current release goes, the newest one left
 * becomes current; the last release cannot be withdrawn.
 */
export async function withdrawRelease(
  options: SigningOptions & ({ version: string; below?: undefined } | { below: string; version?: undefined }),
): Promise<Catalog> {
  const { store, stored } = storedCatalog(options)
  let floor = floorOf(stored)
  let leaving: string[]
  if (options.below !== undefined) {
    if (compareVersions(options.below, floor) <= 0)
      throw new CatalogError(`the floor is ${floor} already: it only goes up`)
    floor = options.below
    leaving = stored.releases.map((r) => r.version).filter((v) => compareVersions(v, floor) < 0)
  } else {
    const listed = stored.releases.map((r) => r.version)
    if (!listed.includes(options.version))
      throw new CatalogError(
        `the catalog has no release ${options.version} to withdraw (it has ${listed.join(', ')})`,
      )
    leaving = [options.version]
  }
  const releases = stored.releases.filter((r) => !leaving.includes(r.version))
  const newest = releases[0]
  if (!newest) {
    const what = options.version ?? `every release below ${options.below}`
    throw new CatalogError(
      stored.releases.length === 1 && options.version !== undefined
        ? `${options.version} is the only release left: publish a fixed version before withdrawing it`
        : `withdrawing ${what} would leave no release: publish a fixed version first`,
    )
  }
  const current = leaving.includes(stored.current.version) ? newest : stored.current
  return store.sign({ floor, withdrawn: [...(stored.withdrawn ?? []), ...leaving], current, releases })
}
