import { existsSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { type ImageManifest, imageManifestPath } from './appliance-record.ts'
import { buildRelease, sha256File } from './build.ts'
import { RELEASE_VERSION } from './catalog.ts'
import { baseRoot } from './image-base.ts'
import { compress, makeDiskImage } from './image-disk.ts'
import type { ImageLayout } from './image-layout.ts'
import { CLOUD_URL, makeRoot, takeBootFiles } from './image-root.ts'
import { checkImageTools } from './image-tools.ts'
import { cacheDir } from './runtime.ts'

/** The architectures an appliance image is made for: Debian's arm64 kernel boots the Pi 3 and 4. */
export const IMAGE_ARCHITECTURES = ['arm64'] as const
export type ImageArchitecture = (typeof IMAGE_ARCHITECTURES)[number]

export interface ImageOptions {
  /** The repository (packaging/appliance, and the hub's sources when the package is built). */
  root: string
  version: string
  arch: ImageArchitecture
  outDir: string
  /** Written into /etc/default/print-hub as PRINT_HUB_CLOUD. */
  cloudUrl: string
  /** An `ota build` output directory holding print-hub_VERSION_ARCH.deb; without it, the package is built. */
  fromDir?: string
  /** The release key's public half, for building the package (not needed with fromDir). */
  publicKeyPem?: string
  env?: NodeJS.ProcessEnv
  /** Progress, one line a step. */
  log?: (line: string) => void
}

export interface BuiltImage {
  filename: string
  sha256: string
  size_bytes: number
  raw_size_bytes: number
  layout: ImageLayout
  build_seconds: number
}

export const imageFilename = (version: string, arch: ImageArchitecture) =>
  `print-hub-${version}-raspi-${arch}.img.xz`

/**
 * `ota image` (docs/appliance.md): a card image for the Raspberry Pi with the hub's package installed,
 * OUT/print-hub-X.Y.Z-raspi-ARCH.img.xz and its SHA-256 in OUT/…img.xz.sha256 (sha256sum's format).
 * Needs root (debootstrap, chroot) and qemu-user-static registered with binfmt_misc.
 */
export async function buildImage(options: ImageOptions): Promise<BuiltImage> {
  const started = Date.now()
  const { version, arch, outDir } = options
  const env = options.env ?? process.env
  const log = options.log ?? (() => {})
  if (!RELEASE_VERSION.test(version))
    throw new Error(`--version must be X.Y.Z (got ${JSON.stringify(version)})`)
  if (!CLOUD_URL.test(options.cloudUrl))
    throw new Error(`--cloud must be an http(s) URL (got ${options.cloudUrl})`)
  checkImageTools()
  mkdirSync(outDir, { recursive: true })
  const cache = cacheDir(env)
  mkdirSync(cache, { recursive: true })
  // The image's parts take a few GB: made in the cache's file system, not a small /tmp.
  const work = mkdtempSync(path.join(cache, '.image-'))
  try {
    let debDir = options.fromDir
    if (!debDir) {
      if (!options.publicKeyPem) throw new Error('building the package needs the release key’s public half')
      log(`building the hub's ${arch} package`)
      debDir = path.join(work, 'release')
      await buildRelease({
        root: options.root,
        version,
        outDir: debDir,
        publicKeyPem: options.publicKeyPem,
        architectures: [arch],
        env,
      })
    }
    const deb = path.join(debDir, `print-hub_${version}_${arch}.deb`)
    if (!existsSync(deb)) throw new Error(`no ${path.basename(deb)} in ${debDir} (ota build --arch ${arch})`)

    log('debootstrap (cached after the first time)')
    const base = await baseRoot(cache, arch)
    const rootDir = path.join(work, 'root')
    mkdirSync(rootDir)
    log('installing the system and the hub in the root (apt-get under qemu: minutes)')
    await makeRoot({
      base,
      dir: rootDir,
      applianceFiles: path.join(options.root, 'packaging/appliance'),
      deb,
      cloudUrl: options.cloudUrl,
    })
    const bootDir = path.join(work, 'boot')
    takeBootFiles(rootDir, bootDir)

    log('making the file systems and the card image')
    const raw = path.join(work, 'image.img')
    const layout = await makeDiskImage(rootDir, bootDir, work, raw)
    rmSync(rootDir, { recursive: true, force: true })
    const rawSha256 = await sha256File(raw)

    log('compressing (xz)')
    const filename = imageFilename(version, arch)
    const compressed = path.join(outDir, filename)
    await compress(raw, compressed)
    const sha256 = await sha256File(compressed)
    writeFileSync(`${compressed}.sha256`, `${sha256}  ${filename}\n`)
    // What the boot test and `ota publish` tie together (appliance-record.ts).
    const manifest: ImageManifest = {
      version,
      architecture: arch,
      package: { filename: path.basename(deb), sha256: await sha256File(deb) },
      image: { filename, sha256, raw_sha256: rawSha256, raw_size_bytes: layout.totalBytes },
    }
    writeFileSync(imageManifestPath(compressed), `${JSON.stringify(manifest, null, 2)}\n`)
    return {
      filename,
      sha256,
      size_bytes: statSync(compressed).size,
      raw_size_bytes: layout.totalBytes,
      layout,
      build_seconds: Math.round((Date.now() - started) / 1000),
    }
  } finally {
    rmSync(work, { recursive: true, force: true })
  }
}
