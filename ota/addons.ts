import { execFile } from 'node:child_process'
import { createHash } from 'node:crypto'
import {
  copyFileSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  renameSync,
  rmSync,
  symlinkSync,
} from 'node:fs'
import { createRequire } from 'node:module'
import path from 'node:path'
import { promisify } from 'node:util'
import type { TargetArchitecture } from './architectures.ts'
import { partialName } from './cache-entry.ts'
import { checkElf, type Runtime } from './runtime.ts'
import { targetLibraries } from './target-libraries.ts'

const run = promisify(execFile)

/**
 * The hub's native addons, compiled from the sources in the build machine's node_modules for the package's
 * architecture, with Debian's toolchain for it (`crossbuild-essential-arm64` and `-armhf`; the native
 * `x86_64-linux-gnu-` one for amd64) and against the headers of the Node.js runtime the package carries.
 * Every architecture is built the same way, the build machine's own included, so that a package holds only
 * what was compiled here: no prebuilt binary of the npm packages, for whatever platform, is shipped.
 * Each addon loads build/Release/<target>.node (better-sqlite3 and ghostscript4js through `bindings`, usb and
 * the serial port through `node-gyp-build`, which looks there before its prebuilds).
 */
export const NATIVE_ADDONS = [
  { name: 'better-sqlite3', target: 'better_sqlite3' },
  { name: 'ghostscript4js', target: 'ghostscript4js' },
  { name: 'usb', target: 'usb_bindings' },
  { name: '@serialport/bindings-cpp', target: 'bindings' },
] as const

export type AddonName = (typeof NATIVE_ADDONS)[number]['name']

/** What the addons need to compile; those present in the package's own node_modules come with it. */
const BUILD_DEPENDENCIES = ['node-addon-api'] as const

/** Debian policy §10.1: binaries shipped stripped; as dh_strip does it. */
export const STRIP_ARGUMENTS = ['--strip-unneeded', '--remove-section=.comment', '--remove-section=.note']

/**
 * Debian 12's build flags with every hardening feature (`DEB_BUILD_MAINT_OPTIONS=hardening=+all
 * dpkg-buildflags`): stack protector, fortified functions, full RELRO with immediate binding. Part of the
 * cache key: addons built with other flags are built again.
 */
const BUILD_FLAGS = {
  CFLAGS: '-O2 -fstack-protector-strong -Wformat -Werror=format-security',
  CPPFLAGS: '-D_FORTIFY_SOURCE=2',
  LDFLAGS: '-Wl,-z,relro -Wl,-z,now',
}
const FLAGS_KEY = createHash('sha256').update(JSON.stringify(BUILD_FLAGS)).digest('hex').slice(0, 8)

const require = createRequire(import.meta.url)
const NODE_GYP = require.resolve('node-gyp/bin/node-gyp.js')

/** Where a package is installed, as Node resolves it from the repository. */
function installedPackage(root: string, name: string): { dir: string; version: string } {
  const manifest = require.resolve(`${name}/package.json`, { paths: [root] })
  return {
    dir: path.dirname(manifest),
    version: (JSON.parse(readFileSync(manifest, 'utf8')) as { version: string }).version,
  }
}

/**
 * Compiles `name` for `target` (or takes it from the cache, keyed by architecture, Node.js version and the
 * addon's version) and returns its stripped build/Release/<target>.node.
 */
async function buildAddon(
  root: string,
  addon: (typeof NATIVE_ADDONS)[number],
  target: TargetArchitecture,
  runtime: Runtime,
  cache: string,
): Promise<string> {
  const installed = installedPackage(root, addon.name)
  const cached = path.join(
    cache,
    'addons',
    `${target.debian}-node${runtime.version}-${FLAGS_KEY}`,
    `${addon.name.replace('/', '+')}@${installed.version}`,
    `${addon.target}.node`,
  )
  if (existsSync(cached)) return cached
  const libraries = targetLibraries(cache, target)
  mkdirSync(path.join(cache, 'addons'), { recursive: true })
  const work = mkdtempSync(path.join(cache, 'addons', '.build-'))
  try {
    // A copy of the sources, outside the repository, with what it includes at build time beside it.
    const source = path.join(work, 'node_modules', addon.name)
    cpSync(installed.dir, source, {
      recursive: true,
      filter: (file) =>
        !/^(build|prebuilds)$/.test(path.relative(installed.dir, file).split(path.sep)[0] ?? ''),
    })
    for (const dependency of BUILD_DEPENDENCIES) {
      const link = path.join(work, 'node_modules', dependency)
      if (!existsSync(link)) symlinkSync(installedPackage(installed.dir, dependency).dir, link)
    }
    const tool = (name: string) => `${target.triplet}-${name}`
    const env = {
      ...process.env,
      CC: tool('gcc'),
      CXX: tool('g++'),
      LINK: tool('g++'),
      AR: tool('ar'),
      CFLAGS: `${BUILD_FLAGS.CFLAGS} ${BUILD_FLAGS.CPPFLAGS} -I${libraries.include}`,
      CXXFLAGS: `${BUILD_FLAGS.CFLAGS} ${BUILD_FLAGS.CPPFLAGS} -I${libraries.include}`,
      LDFLAGS: `${BUILD_FLAGS.LDFLAGS} -L${libraries.lib}`,
      // ghostscript4js's binding.gyp links GS4JS_HOME/libgs.so.
      GS4JS_HOME: libraries.lib,
    }
    await run(
      process.execPath,
      [NODE_GYP, 'configure', `--arch=${target.node}`, `--nodedir=${runtime.dir}`, '--loglevel=error'],
      { cwd: source, env, maxBuffer: 1 << 26 },
    ).catch((error: { stderr?: string; message: string }) => {
      throw new Error(
        `node-gyp configure of ${addon.name} for ${target.debian} failed: ${error.stderr ?? error.message}`,
      )
    })
    await run('make', ['-C', 'build', 'BUILDTYPE=Release', '-j2', addon.target], {
      cwd: source,
      env,
      maxBuffer: 1 << 26,
    }).catch((error: { stderr?: string; message: string }) => {
      throw new Error(`compiling ${addon.name} for ${target.debian} failed: ${error.stderr ?? error.message}`)
    })
    const built = path.join(source, 'build/Release', `${addon.target}.node`)
    checkElf(built, target)
    // Debian policy §10.1: binaries are shipped stripped of debugging symbols.
    await run(tool('strip'), [
      '--strip-unneeded',
      '--remove-section=.comment',
      '--remove-section=.note',
      built,
    ])
    mkdirSync(path.dirname(cached), { recursive: true })
    const partial = partialName(cached)
    copyFileSync(built, partial)
    renameSync(partial, cached)
    return cached
  } finally {
    rmSync(work, { recursive: true, force: true })
  }
}

/** Every native addon for `target`, built one after the other (each uses both cores): name → .node file. */
export async function buildAddons(
  root: string,
  target: TargetArchitecture,
  runtime: Runtime,
  cache: string,
): Promise<Map<AddonName, { file: string; target: string }>> {
  const out = new Map<AddonName, { file: string; target: string }>()
  for (const addon of NATIVE_ADDONS)
    out.set(addon.name, { file: await buildAddon(root, addon, target, runtime, cache), target: addon.target })
  return out
}
