import { execFile } from 'node:child_process'
import { createHash } from 'node:crypto'
import {
  chmodSync,
  copyFileSync,
  cpSync,
  createReadStream,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { promisify } from 'node:util'
import { buildAddons, STRIP_ARGUMENTS } from './addons.ts'
import { type Architecture, architectureOf, TARGETS, type TargetArchitecture } from './architectures.ts'
import { bundleHub, EXTERNAL_PACKAGES } from './bundle.ts'
import { type Installer, RELEASE_VERSION } from './catalog.ts'
import {
  buildDeb,
  DEPENDS,
  installedSizeKb,
  stageControl,
  stageDebianFiles,
  stageSystemFiles,
} from './debian.ts'
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

/** The top-level directories of the staged tree that the package and the tarball hold. */
export const PACKAGE_TREE = ['opt', 'lib', 'etc', 'usr'] as const

/** tar's arguments for a release tarball of the staged tree `stage`: owned by root, in name order. */
export const tarballArguments = (file: string, stage: string) => [
  '--create',
  '--gzip',
  '--file',
  file,
  '--directory',
  stage,
  '--owner=0',
  '--group=0',
  '--numeric-owner',
  '--sort=name',
  ...PACKAGE_TREE,
]

export interface BuildOptions {
  /** The repository (the sources of the native addons are in its node_modules). */
  root: string
  version: string
  outDir: string
  /** The release key's public half (PEM), shipped as share/release-key.pem. */
  publicKeyPem: string
  /** The architectures to build, in order (default: the build machine's own). */
  architectures?: readonly Architecture[]
  env?: NodeJS.ProcessEnv
}

/** What `ota build` writes to OUT/release.json. */
export interface ReleaseManifest {
  version: string
  built_at: string
  /** The Node.js version each architecture's package carries. */
  node_versions: Partial<Record<Architecture, string>>
  installers: Installer[]
}

export async function sha256File(file: string): Promise<string> {
  const hash = createHash('sha256')
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer)
  return hash.digest('hex')
}

/**
 * The manifest already in `outDir` for this version, so that architectures built one run at a time into the same
 * directory end up in one release.json; another version's, or none, gives nothing to keep.
 */
function earlierManifest(outDir: string, version: string): ReleaseManifest | undefined {
  try {
    const manifest = JSON.parse(readFileSync(path.join(outDir, MANIFEST), 'utf8')) as ReleaseManifest
    return manifest.version === version && Array.isArray(manifest.installers) ? manifest : undefined
  } catch {
    return undefined
  }
}

/**
 * Builds a hub release for each architecture asked (the build machine's own by default): the staged tree
 * /opt/print-hub (the hub bundled by esbuild, its native dependencies compiled for that architecture, the
 * Node.js runtime for it, the release key), the systemd unit, udev rules and settings file; then the Debian
 * package and a tarball of the same tree. OUT/release.json lists the installers of every architecture built
 * into OUT for this version.
 */
export async function buildRelease(options: BuildOptions): Promise<ReleaseManifest> {
  const { root, version, outDir } = options
  const env = options.env ?? process.env
  if (!RELEASE_VERSION.test(version))
    throw new Error(`--version must be X.Y.Z (got ${JSON.stringify(version)})`)
  const architectures = options.architectures?.length ? options.architectures : [architectureOf()]
  mkdirSync(outDir, { recursive: true })
  const earlier = earlierManifest(outDir, version)
  const manifest: ReleaseManifest = {
    version,
    built_at: new Date().toISOString(),
    node_versions: { ...earlier?.node_versions },
    installers: (earlier?.installers ?? []).filter((i) => !architectures.includes(i.architecture)),
  }
  const work = mkdtempSync(path.join(tmpdir(), 'ota-build-'))
  try {
    // The JavaScript is the same on every architecture: bundled once.
    const bundle = path.join(work, 'bundle')
    const { packages } = await bundleHub(root, bundle, version)
    for (const architecture of architectures) {
      const built = await buildArchitecture(
        options,
        TARGETS[architecture],
        { dir: bundle, packages },
        work,
        manifest.built_at,
        env,
      )
      manifest.node_versions[architecture] = built.nodeVersion
      manifest.installers.push(...built.installers)
    }
  } finally {
    rmSync(work, { recursive: true, force: true })
  }
  manifest.installers.sort(
    (a, b) => a.architecture.localeCompare(b.architecture) || a.format.localeCompare(b.format),
  )
  writeFileSync(path.join(outDir, MANIFEST), `${JSON.stringify(manifest, null, 2)}\n`)
  return manifest
}

async function buildArchitecture(
  options: BuildOptions,
  target: TargetArchitecture,
  bundle: { dir: string; packages: readonly string[] },
  work: string,
  builtAt: string,
  env: NodeJS.ProcessEnv,
): Promise<{ nodeVersion: string; installers: Installer[] }> {
  const { root, version, outDir } = options
  const architecture = target.debian
  const cache = cacheDir(env)
  const runtime = nodeRuntime(cache, target)
  const addons = await buildAddons(root, target, runtime, cache)
  const stage = path.join(work, `root-${architecture}`)
  const installRoot = path.join(stage, INSTALL_ROOT)
  const app = path.join(installRoot, 'releases', version)
  cpSync(bundle.dir, app, { recursive: true })
  copyRuntimeDependencies(root, EXTERNAL_PACKAGES, path.join(app, 'node_modules'), addons)
  mkdirSync(path.join(app, 'runtime/bin'), { recursive: true })
  copyFileSync(path.join(runtime.dir, 'LICENSE'), path.join(app, 'runtime/LICENSE'))
  copyFileSync(path.join(runtime.dir, 'bin/node'), path.join(app, 'runtime/bin/node'))
  // Debian policy §10.1: shipped stripped (the official build carries its symbol table: 14 MB of 99 on arm64).
  await run(`${target.triplet}-strip`, [...STRIP_ARGUMENTS, path.join(app, 'runtime/bin/node')])
  chmodSync(path.join(app, 'runtime/bin/node'), 0o755)
  mkdirSync(path.join(app, 'share'), { recursive: true })
  writeFileSync(path.join(app, 'share/release-key.pem'), options.publicKeyPem)
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
  stageDebianFiles(root, stage, { version, dir: app, builtAt, bundledPackages: bundle.packages })

  const tree = [...PACKAGE_TREE]
  const debName = `print-hub_${version}_${architecture}.deb`
  const tarName = `print-hub_${version}_linux-${architecture}.tar.gz`
  const tarball = run('tar', tarballArguments(path.join(outDir, tarName), stage))
  stageControl(root, stage, {
    version,
    architecture,
    installedSizeKb: installedSizeKb(stage, tree),
    nodeVersion: runtime.version,
    depends: [...DEPENDS, ...target.runtimeDepends],
  })
  // dpkg-deb and tar read the same tree at once (two cores); tar does not read DEBIAN/.
  buildDeb(stage, path.join(outDir, debName), env)
  await tarball
  rmSync(stage, { recursive: true, force: true })

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
  return { nodeVersion: runtime.version, installers }
}
