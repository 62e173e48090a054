import { createHash, generateKeyPairSync, randomBytes } from 'node:crypto'
import { mkdirSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import type { Architecture } from '../../ota/architectures.ts'
import { publishRelease } from '../../ota/publish.ts'

export interface FakeInstaller {
  arch: Architecture
  size: number
}

/**
 * A build directory as `ota build` writes it (release.json and its installers), with one .deb and one tarball
 * per architecture holding random bytes: the catalog and the download routes do not care what an installer
 * holds (test/ota/package.test.ts publishes real ones). `files` supplies the bytes of a file name seen before
 * and records the bytes written.
 */
export function writeFakeBuild(
  dir: string,
  version: string,
  installers: FakeInstaller[],
  files: Map<string, Buffer> = new Map(),
): string {
  mkdirSync(dir, { recursive: true })
  const entries = installers.flatMap(({ arch, size }) =>
    (['deb', 'tar.gz'] as const).map((format) => {
      const filename =
        format === 'deb' ? `print-hub_${version}_${arch}.deb` : `print-hub_${version}_linux-${arch}.tar.gz`
      const bytes = files.get(filename) ?? randomBytes(size)
      files.set(filename, bytes)
      writeFileSync(path.join(dir, filename), bytes)
      return {
        filename,
        platform: 'linux',
        architecture: arch,
        format,
        size_bytes: bytes.length,
        sha256: createHash('sha256').update(bytes).digest('hex'),
      }
    }),
  )
  const manifest = {
    version,
    built_at: new Date().toISOString(),
    node_versions: Object.fromEntries(installers.map(({ arch }) => [arch, '20.0.0'])),
    installers: entries,
  }
  writeFileSync(path.join(dir, 'release.json'), JSON.stringify(manifest))
  return dir
}

/**
 * Publishes fake builds (one installer of each format for each architecture, arm64 unless told) into the data
 * directory `dataDir()` names at each call, as `ota publish` does, all signed with one fresh Ed25519 key
 * (`privateKeyPem`, for `ota withdraw` and `ota resign` in a test). `signed` sets the time of signing and
 * how long the catalog is valid.
 */
export function fakeReleasePublisher(
  dataDir: () => string,
): ((
  version: string,
  architectures?: Architecture[],
  signed?: { now?: Date; expiresInDays?: number },
) => ReturnType<typeof publishRelease>) & { privateKeyPem: string } {
  const privateKeyPem = generateKeyPairSync('ed25519')
    .privateKey.export({ type: 'pkcs8', format: 'pem' })
    .toString()
  const publish = (version: string, architectures: Architecture[] = ['arm64'], signed = {}) =>
    publishRelease({
      fromDir: writeFakeBuild(
        path.join(dataDir(), `build-${version}`),
        version,
        architectures.map((arch) => ({ arch, size: 100 })),
      ),
      dataDir: dataDir(),
      privateKeyPem,
      // No card image is made of a fake build (ota/appliance-record.ts).
      withoutBootTest: 'a fake build',
      ...signed,
    })
  return Object.assign(publish, { privateKeyPem })
}
