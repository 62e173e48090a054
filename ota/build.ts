import { execFile } from 'node:child_process'
import { createHash } from 'node:crypto'
import {
  chmodSync,
  copyFileSync,
  cpSync,
  createReadStream,
  mkdirSync,
  mkdtempSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { promisify } from 'node:util'
import { bundleHub, EXTERNAL_PACKAGES } from './bundle.ts'
import { type Installer, RELEASE_VERSION } from './catalog.ts'
import { buildDeb, debianArchitecture, installedSizeKb, stageControl, stageSystemFiles } from './debian.ts'
import { copyRuntimeDependencies } from './dependencies.ts'
import { cacheDir, nodeRuntime } from './runtime.ts'

const run = promisify(execFile)

/**
 * Where the hub lives once installed; the tarball and the package hold the same tree: the launcher
 * bin/print-hub, the release in releases/X.Y.Z and `current` pointing at it (docs/hub-updates.md).
 */
export const INSTALL_ROOT = 'opt/print-hub'
/** The release's manifest in the build's output directory, read by `ota publish`. */
export const MANIFEST = 'release.json'

export interface BuildOptions {
  /** The repository (its node_modules hold the built native addons). */
  root: string
  version: string
  outDir: string
  /** The release key's public half (PEM), shipped as share/release-key.pem. */
  publicKeyPem: string
  env?: NodeJS.ProcessEnv
}

/** What `ota build` writes to OUT/release.json. */
export interface ReleaseManifest {
  version: string
  built_at: string
  node_version: string
  installers: Installer[]
}

export async function sha256File(file: string): Promise<string> {
  const hash = createHash('sha256')
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer)
  return hash.digest('hex')
}

/**
 * Builds a hub release for this machine's architecture: the staged tree /opt/print-hub (the hub bundled by
 * esbuild, its native dependencies, the Node.js runtime, the release key), the systemd unit, udev rules and
 * settings file; then the Debian package and a tarball of the same tree, and OUT/release.json.
 */
export async function buildRelease(options: BuildOptions): Promise<ReleaseManifest> {
  const { root, version, outDir } = options
  const env = options.env ?? process.env
  if (!RELEASE_VERSION.test(version))
    throw new Error(`--version must be X.Y.Z (got ${JSON.stringify(version)})`)
  const architecture = debianArchitecture()
  const runtime = nodeRuntime(cacheDir(env))
  mkdirSync(outDir, { recursive: true })
  const work = mkdtempSync(path.join(tmpdir(), 'ota-build-'))
  try {
    const stage = path.join(work, 'root')
    const installRoot = path.join(stage, INSTALL_ROOT)
    const app = path.join(installRoot, 'releases', version)
    await bundleHub(root, app, version)
    copyRuntimeDependencies(root, EXTERNAL_PACKAGES, path.join(app, 'node_modules'))
    cpSync(runtime.dir, path.join(app, 'runtime'), { recursive: true })
    mkdirSync(path.join(app, 'share'), { recursive: true })
    writeFileSync(path.join(app, 'share/release-key.pem'), options.publicKeyPem)
    const builtAt = new Date().toISOString()
    writeFileSync(
      path.join(app, 'release.json'),
      `${JSON.stringify({ version, architecture, node_version: runtime.version, built_at: builtAt }, null, 2)}\n`,
    )
    // The launcher sits outside the releases: it is what rolls a failed release back.
    mkdirSync(path.join(installRoot, 'bin'), { recursive: true })
    copyFileSync(path.join(root, 'packaging/print-hub.sh'), path.join(installRoot, 'bin/print-hub'))
    chmodSync(path.join(installRoot, 'bin/print-hub'), 0o755)
    symlinkSync(`releases/${version}`, path.join(installRoot, 'current'))
    mkdirSync(path.join(stage, 'usr/bin'), { recursive: true })
    symlinkSync(`/${INSTALL_ROOT}/bin/print-hub`, path.join(stage, 'usr/bin/print-hub'))
    stageSystemFiles(root, stage)

    const tree = ['opt', 'lib', 'etc', 'usr']
    const debName = `print-hub_${version}_${architecture}.deb`
    const tarName = `print-hub_${version}_linux-${architecture}.tar.gz`
    const tarball = run('tar', [
      '--create',
      '--gzip',
      '--file',
      path.join(outDir, tarName),
      '--directory',
      stage,
      '--owner=0',
      '--group=0',
      '--numeric-owner',
      '--sort=name',
      ...tree,
    ])
    stageControl(root, stage, {
      version,
      architecture,
      installedSizeKb: installedSizeKb(stage, tree),
      nodeVersion: runtime.version,
    })
    // dpkg-deb and tar read the same tree at once (two cores); tar does not read DEBIAN/.
    buildDeb(stage, path.join(outDir, debName), env)
    await tarball

    const installers: Installer[] = []
    for (const [filename, format] of [
      [debName, 'deb'],
      [tarName, 'tar.gz'],
    ] as const) {
      const file = path.join(outDir, filename)
      installers.push({
        filename,
        platform: 'linux',
        architecture,
        format,
        size_bytes: statSync(file).size,
        sha256: await sha256File(file),
      })
    }
    const manifest: ReleaseManifest = {
      version,
      built_at: builtAt,
      node_version: runtime.version,
      installers,
    }
    writeFileSync(path.join(outDir, MANIFEST), `${JSON.stringify(manifest, null, 2)}\n`)
    return manifest
  } finally {
    rmSync(work, { recursive: true, force: true })
  }
}
