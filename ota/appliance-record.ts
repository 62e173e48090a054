import { existsSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { Type } from 'typebox'
import { Value } from 'typebox/value'
import { CatalogError, type Installer } from './catalog.ts'

/**
 * What ties a release to a boot of the card image made from it (docs/appliance-boot-test.md, "Before a
 * release"): `ota image` writes a manifest beside the image naming the package it holds; the boot test, when it
 * passes, writes a record naming the image it booted and that package; `ota publish` refuses a release with an
 * arm64 package unless the release directory holds a passing record for that very package.
 */

const Sha256 = Type.String({ pattern: '^[0-9a-f]{64}$' })

/** `…raspi-arm64.img.json`, written by `ota image` beside the compressed image. */
export const ImageManifest = Type.Object({
  version: Type.String(),
  architecture: Type.Literal('arm64'),
  package: Type.Object({ filename: Type.String(), sha256: Sha256 }),
  image: Type.Object({
    filename: Type.String(),
    sha256: Sha256,
    raw_sha256: Sha256,
    raw_size_bytes: Type.Integer(),
  }),
})
export type ImageManifest = Type.Static<typeof ImageManifest>

/** Written by the boot test when it passes (APPLIANCE_RECORD). */
export const BootTestRecord = Type.Object({
  version: Type.String(),
  package_sha256: Sha256,
  image_raw_sha256: Sha256,
  passed_at: Type.String({ format: 'date-time' }),
  test: Type.Literal('test/appliance/boot.test.ts'),
})
export type BootTestRecord = Type.Static<typeof BootTestRecord>

/** The record's name in a release directory (`ota build --out DIR`), where `ota publish --from DIR` looks. */
export const BOOT_TEST_RECORD = 'appliance-boot-test.json'

/** The manifest of a raw image decompressed beside it: `X.img` → `X.img.json` (from `X.img.xz`). */
export const imageManifestPath = (image: string) => `${image.replace(/\.img(\.xz)?$/, '.img')}.json`

/**
 * Refuses to publish `installers` when one is an arm64 package without a passing boot test record for its
 * bytes in `fromDir`. `without` (a reason) lets it through: for a release that is not made into an image.
 */
export function checkBootTested(
  fromDir: string,
  version: string,
  installers: readonly Installer[],
  without?: string,
) {
  const arm64 = installers.find((i) => i.architecture === 'arm64' && i.format === 'deb')
  if (!arm64 || without) return
  const file = path.join(fromDir, BOOT_TEST_RECORD)
  const how =
    `boot the card image made from it first: APPLIANCE_IMAGE=….img APPLIANCE_RECORD=${file} npm run ` +
    'test:appliance (docs/appliance-boot-test.md), or pass --without-boot-test REASON'
  if (!existsSync(file)) throw new CatalogError(`${arm64.filename} has not been boot-tested: ${how}`)
  let record: unknown
  try {
    record = JSON.parse(readFileSync(file, 'utf8'))
  } catch {
    throw new CatalogError(`${file} is not JSON: ${how}`)
  }
  if (!Value.Check(BootTestRecord, record))
    throw new CatalogError(`${file} is not a boot test record: ${how}`)
  if (record.version !== version || record.package_sha256 !== arm64.sha256)
    throw new CatalogError(
      `${file} is for another build (version ${record.version}, package ${record.package_sha256.slice(0, 12)}…, ` +
        `not ${version}, ${arm64.sha256.slice(0, 12)}…): ${how}`,
    )
}
