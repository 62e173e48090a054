import { copyFileSync } from 'node:fs'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { CatalogUnavailable, ReleaseCatalog } from '../../../cloud/releases/release-catalog.ts'
import { openStorage, type Storage } from '../../../cloud/storage/storage.ts'
import { fakeReleasePublisher } from '../../helpers/fake-release.ts'
import { tempDir } from '../../helpers/temp-dir.ts'

/**
 * The release catalog as the cloud reads it from DATA_DIR/releases (real files, a real Ed25519 signature):
 * each hub's state report asks for it, so a reader may let it be up to `maxAgeMs` old instead of checking the
 * files each time; the catalog route always checks.
 */
describe('release catalog files, read again when they change', () => {
  let dir: ReturnType<typeof tempDir>
  let storage: Storage
  let catalog: ReleaseCatalog
  const publish = fakeReleasePublisher(() => dir.path)
  const currentVersion = async (maxAgeMs?: number) =>
    (await catalog.current(maxAgeMs)).catalog.current.version

  const releasesDir = () => path.join(dir.path, 'releases')

  beforeEach(async () => {
    dir = tempDir('release-catalog-')
    storage = await openStorage({ dataDir: dir.path })
    catalog = new ReleaseCatalog(releasesDir(), storage.servedCatalogs)
  })
  afterEach(async () => {
    await storage.close()
    dir.remove()
  })

  it('serves a newly published catalog at once when asked without an age', async () => {
    await expect(catalog.current()).rejects.toBeInstanceOf(CatalogUnavailable)
    await publish('1.0.0')
    expect(await currentVersion()).toBe('1.0.0')
    await publish('1.1.0')
    expect(await currentVersion()).toBe('1.1.0')
  })

  it('answers within maxAgeMs of its last check from what it read then, unavailable or not', async () => {
    await expect(catalog.current(60_000)).rejects.toBeInstanceOf(CatalogUnavailable)
    await publish('1.0.0')
    await expect(catalog.current(60_000)).rejects.toBeInstanceOf(CatalogUnavailable)
    expect(await currentVersion(0)).toBe('1.0.0')
    await publish('1.1.0')
    expect(await currentVersion(60_000)).toBe('1.0.0')
    expect(await currentVersion()).toBe('1.1.0')
    expect(await currentVersion(60_000)).toBe('1.1.0')
  })

  it('refuses an older catalog put back in place of the one it served, also after a restart (the database remembers)', async () => {
    await publish('1.0.0')
    const catalogFile = path.join(releasesDir(), 'catalog.json')
    copyFileSync(catalogFile, path.join(dir.path, 'catalog-serial-1.json'))
    await publish('1.1.0')
    expect(await currentVersion()).toBe('1.1.0')
    copyFileSync(path.join(dir.path, 'catalog-serial-1.json'), catalogFile)
    const refusal = new CatalogUnavailable(
      'the catalog has serial 1, lower than serial 2 this cloud has served: an older catalog was put back ' +
        '(restore the newer one, or re-sign with ota resign --serial 3)',
    )
    await expect(catalog.current()).rejects.toThrow(refusal)
    await expect(new ReleaseCatalog(releasesDir(), storage.servedCatalogs).current()).rejects.toThrow(refusal)
    // A publish over the old file signs serial 2 again, with other contents than the served serial 2.
    await publish('1.2.0')
    await expect(catalog.current()).rejects.toThrow(
      new CatalogUnavailable(
        'the catalog has serial 2, as the one this cloud has served, but other contents: it was signed over an ' +
          'older catalog (re-sign with ota resign --serial 3)',
      ),
    )
  })

  it('serves a catalog of the same serial again (another node, a restart)', async () => {
    await publish('1.0.0')
    expect(await currentVersion()).toBe('1.0.0')
    const again = new ReleaseCatalog(releasesDir(), storage.servedCatalogs)
    expect((await again.current()).catalog.current.version).toBe('1.0.0')
  })
})
