import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { CatalogUnavailable, ReleaseCatalog } from '../../../cloud/releases/release-catalog.ts'
import { fakeReleasePublisher } from '../../helpers/fake-release.ts'
import { tempDir } from '../../helpers/temp-dir.ts'

/**
 * The release catalog as the cloud reads it from DATA_DIR/releases (real files, a real Ed25519 signature):
 * each hub's state report asks for it, so a reader may let it be up to `maxAgeMs` old instead of checking the
 * files each time; the catalog route always checks.
 */
describe('release catalog files, read again when they change', () => {
  let dir: ReturnType<typeof tempDir>
  let catalog: ReleaseCatalog
  const publish = fakeReleasePublisher(() => dir.path)
  const currentVersion = async (maxAgeMs?: number) =>
    (await catalog.current(maxAgeMs)).catalog.current.version

  beforeEach(() => {
    dir = tempDir('release-catalog-')
    catalog = new ReleaseCatalog(path.join(dir.path, 'releases'))
  })
  afterEach(() => dir.remove())

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
})
