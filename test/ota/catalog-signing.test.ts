import { generateKeyPairSync } from 'node:crypto'
import { readFileSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import {
  type Catalog,
  CatalogError,
  keyIdOf,
  parseSignedCatalog,
  signCatalog,
  verifyCatalog,
} from '../../ota/catalog.ts'
import { publishRelease } from '../../ota/publish.ts'
import { resignCatalog, withdrawRelease } from '../../ota/resign.ts'
import { runCli } from '../helpers/cli.ts'
import { writeFakeBuild } from '../helpers/fake-release.ts'
import { tempDir } from '../helpers/temp-dir.ts'

// What `ota publish`, `ota withdraw` and `ota resign` sign (docs/hub-updates.md: Rollback, freeze and the other attacks): real
// Ed25519 signatures over real files in a temporary DATA_DIR, read back as the cloud and hubs verify them.

const T0 = new Date('2026-11-24T12:00:00.000Z')
const DAY_MS = 86_400_000
const at = (days: number) => new Date(T0.getTime() + days * DAY_MS)

describe('the signed catalog’s serial, expiry, floor and withdrawn releases', () => {
  let dir: ReturnType<typeof tempDir>
  const keys = generateKeyPairSync('ed25519')
  const privateKeyPem = keys.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString()
  const keyFile = () => path.join(dir.path, 'release-key.pem')

  beforeEach(() => {
    dir = tempDir('catalog-signing-')
  })
  afterEach(() => dir.remove())

  const dataDir = () => path.join(dir.path, 'data')
  const publish = (version: string, now: Date, expiresInDays?: number) =>
    publishRelease({
      fromDir: writeFakeBuild(path.join(dir.path, `build-${version}`), version, [
        { arch: 'arm64', size: 64 },
      ]),
      dataDir: dataDir(),
      privateKeyPem,
      now,
      withoutBootTest: 'a fake build',
      ...(expiresInDays !== undefined && { expiresInDays }),
    })
  /** The catalog as stored, verified as the cloud and hubs verify it. */
  const stored = (): Catalog =>
    verifyCatalog(
      parseSignedCatalog(readFileSync(path.join(dataDir(), 'releases/catalog.json'), 'utf8')),
      keys.publicKey,
    )
  const versions = (c: Catalog) => c.releases.map((r) => r.version)

  it('each publish signs a serial one higher and an expiry 30 days on (or as asked)', async () => {
    await publish('1.0.0', T0)
    expect(stored()).toMatchObject({
      catalog_version: 1,
      serial: 1,
      published_at: T0.toISOString(),
      expires_at: at(30).toISOString(),
      floor: '1.0.0',
      withdrawn: [],
    })
    await publish('1.1.0', at(1), 7)
    expect(stored()).toMatchObject({ serial: 2, expires_at: at(8).toISOString(), floor: '1.0.0' })
    await expect(publish('1.2.0', at(2), 0)).rejects.toThrow(
      new CatalogError('the expiry must be 1 to 366 days (got 0)'),
    )
    expect(stored().serial).toBe(2)
  })

  it('resign: the same releases under a higher serial and a later expiry; an explicit serial must be higher', async () => {
    await publish('1.0.0', T0)
    await publish('1.1.0', T0)
    const before = stored()
    const after = await resignCatalog({ dataDir: dataDir(), privateKeyPem, now: at(20) })
    expect(after).toEqual({
      ...before,
      serial: 3,
      published_at: at(20).toISOString(),
      expires_at: at(50).toISOString(),
    })
    expect(stored()).toEqual(after)
    expect((await resignCatalog({ dataDir: dataDir(), privateKeyPem, now: at(21), serial: 40 })).serial).toBe(
      40,
    )
    await expect(
      resignCatalog({ dataDir: dataDir(), privateKeyPem, now: at(21), serial: 40 }),
    ).rejects.toThrow(new CatalogError('the serial must be higher than the stored catalog’s 40 (got 40)'))
  })

  it('withdraw: the release leaves the catalog and is listed as withdrawn; it cannot come back', async () => {
    await publish('1.0.0', T0)
    await publish('1.1.0', T0)
    await publish('1.2.0', T0)
    const catalog = await withdrawRelease({ dataDir: dataDir(), privateKeyPem, version: '1.1.0', now: at(1) })
    expect(catalog).toMatchObject({ serial: 4, floor: '1.0.0', withdrawn: ['1.1.0'] })
    expect(versions(catalog)).toEqual(['1.2.0', '1.0.0'])
    expect(catalog.current.version).toBe('1.2.0')
    await expect(publish('1.1.0', at(2))).rejects.toThrow(
      new CatalogError('release 1.1.0 was withdrawn: build a new version'),
    )
    await expect(
      withdrawRelease({ dataDir: dataDir(), privateKeyPem, version: '1.1.0', now: at(2) }),
    ).rejects.toThrow(new CatalogError('the catalog has no release 1.1.0 to withdraw (it has 1.2.0, 1.0.0)'))
    expect(stored().serial).toBe(4)
  })

  it('withdrawing the current release makes the newest remaining one current; the last one stays', async () => {
    await publish('1.0.0', T0)
    await publish('1.1.0', T0)
    const catalog = await withdrawRelease({ dataDir: dataDir(), privateKeyPem, version: '1.1.0', now: T0 })
    expect(catalog.current.version).toBe('1.0.0')
    await expect(
      withdrawRelease({ dataDir: dataDir(), privateKeyPem, version: '1.0.0', now: T0 }),
    ).rejects.toThrow(
      new CatalogError('1.0.0 is the only release left: publish a fixed version before withdrawing it'),
    )
  })

  it('withdraw --below raises the signed floor: every older release is withdrawn, none may be published', async () => {
    await publish('1.0.0', T0)
    await publish('1.1.0', T0)
    await publish('1.2.0', T0)
    const catalog = await withdrawRelease({ dataDir: dataDir(), privateKeyPem, below: '1.2.0', now: T0 })
    expect(catalog).toMatchObject({ floor: '1.2.0', withdrawn: ['1.1.0', '1.0.0'] })
    expect(versions(catalog)).toEqual(['1.2.0'])
    await expect(publish('1.1.5', T0)).rejects.toThrow(
      new CatalogError('release 1.1.5 is below the catalog’s floor 1.2.0: build a newer version'),
    )
    await expect(
      withdrawRelease({ dataDir: dataDir(), privateKeyPem, below: '1.1.0', now: T0 }),
    ).rejects.toThrow(new CatalogError('the floor is 1.2.0 already: it only goes up'))
  })

  it('a catalog signed before serials gets serial 1 and the floor at its oldest release at the next signing', async () => {
    await publish('1.0.0', T0)
    await publish('1.1.0', T0)
    const { serial, expires_at, floor, withdrawn, ...legacy } = stored()
    const file = path.join(dataDir(), 'releases/catalog.json')
    writeFileSync(file, `${JSON.stringify(signCatalog(legacy, keys.privateKey))}\n`)
    expect(stored().serial).toBeUndefined()
    const resigned = await resignCatalog({ dataDir: dataDir(), privateKeyPem, now: T0 })
    expect(resigned).toMatchObject({ serial: 1, floor: '1.0.0', withdrawn: [] })
    expect(versions(resigned)).toEqual(['1.1.0', '1.0.0'])
  })

  it('a signed catalog that lists a withdrawn release or one below its floor is refused by every reader', () => {
    const release = (version: string) => ({
      version,
      released_at: T0.toISOString(),
      notes: '',
      installers: [
        {
          filename: `print-hub_${version}_linux-arm64.tar.gz`,
          platform: 'linux' as const,
          architecture: 'arm64' as const,
          format: 'tar.gz' as const,
          size_bytes: 1,
          sha256: '0'.repeat(64),
        },
      ],
    })
    const base = {
      catalog_version: 1,
      serial: 5,
      published_at: T0.toISOString(),
      expires_at: at(30).toISOString(),
      current: release('1.1.0'),
      releases: [release('1.1.0'), release('1.0.0')],
    }
    const key = keys.publicKey
    const verifyWith = (fields: Partial<Catalog>) =>
      verifyCatalog(
        signCatalog({ ...base, key_id: keyIdOf(key), ...fields } as Catalog, keys.privateKey),
        key,
      )
    expect(() => verifyWith({ floor: '1.1.0', withdrawn: [] })).toThrow(
      new CatalogError('the catalog lists release 1.0.0 below its floor 1.1.0'),
    )
    expect(() => verifyWith({ floor: '1.0.0', withdrawn: ['1.0.0'] })).toThrow(
      new CatalogError('the catalog lists release 1.0.0, which it withdraws'),
    )
    expect(verifyWith({ floor: '1.0.0', withdrawn: ['0.9.0'] }).serial).toBe(5)
  })

  it('ota withdraw and ota resign on the command line', async () => {
    await publish('1.0.0', new Date())
    await publish('1.1.0', new Date())
    writeFileSync(keyFile(), privateKeyPem, { mode: 0o600 })
    const env = { DATA_DIR: dataDir(), OTA_SIGNING_KEY: keyFile() }
    const withdrawn = runCli('ota/cli.ts', ['withdraw', '1.0.0'], env)
    expect(withdrawn.stderr).toBe('')
    expect(JSON.parse(withdrawn.stdout)).toMatchObject({
      serial: 3,
      current: '1.1.0',
      floor: '1.0.0',
      withdrawn: ['1.0.0'],
      releases: ['1.1.0'],
    })
    const resigned = runCli('ota/cli.ts', ['resign', '--expires-in', '10'], env)
    expect(resigned.stderr).toBe('')
    expect(JSON.parse(resigned.stdout)).toMatchObject({ serial: 4, current: '1.1.0', releases: ['1.1.0'] })
    const usage = runCli('ota/cli.ts', ['withdraw'], env)
    expect(usage).toMatchObject({ status: 2, stdout: '' })
    expect(usage.stderr.split('\n')[0]).toBe('ota: give a VERSION to withdraw, or --below X.Y.Z')
  }, 120_000)
})
