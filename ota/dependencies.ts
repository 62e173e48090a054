import { cpSync, existsSync, readFileSync, realpathSync } from 'node:fs'
import path from 'node:path'

/**
 * The production dependencies a packaged hub loads at run time (the externals of bundle.ts and what they
 * require), copied from the build machine's node_modules, where `npm ci` built their native addons for this
 * architecture and Node version. Only what runs is kept: no sources, objects, headers, tests or prebuilt
 * binaries of other platforms.
 */

/** Needed only to install (or to compile) a package, never at run time. */
const INSTALL_ONLY = new Set(['prebuild-install', 'node-addon-api', 'node-gyp', '@types/w3c-web-usb'])
// Not `src`: some packages run from it (debug's main is src/index.js); C++ sources go by their extension.
const SKIPPED_DIRS = new Set([
  'deps',
  'test',
  'tests',
  'obj',
  'obj.target',
  '.deps',
  'docs',
  'doc',
  'examples',
  'example',
  'benchmark',
  'libusb',
  'libusb_config',
  'include',
  '.github',
])
const SKIPPED_FILES = /\.(a|o|c|cc|cpp|h|hpp|lzz|gyp|gypi|mk|map|md|markdown|ts|tsbuildinfo)$|^Makefile$/
const PLATFORM_DIR = /^(android|darwin|win32|linux|freebsd|openbsd|sunos)-/

interface Manifest {
  name: string
  dependencies?: Record<string, string>
  optionalDependencies?: Record<string, string>
}

/** The directory of package `name` as Node resolves it from `from` (walking up node_modules). */
function packageDir(name: string, from: string, root: string): string | undefined {
  let dir = from
  for (;;) {
    const candidate = path.join(dir, 'node_modules', name)
    if (existsSync(path.join(candidate, 'package.json'))) return realpathSync(candidate)
    if (dir === root || path.dirname(dir) === dir) return undefined
    dir = path.dirname(dir)
  }
}

/** Every package directory `roots` need at run time, each once. */
export function runtimeClosure(root: string, roots: readonly string[]): string[] {
  const found = new Set<string>()
  const visit = (name: string, from: string) => {
    if (INSTALL_ONLY.has(name) || name.startsWith('@types/')) return
    const dir = packageDir(name, from, root)
    if (!dir) throw new Error(`${name} (needed by ${from}) is not installed: run npm ci first`)
    if (found.has(dir)) return
    found.add(dir)
    const manifest = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')) as Manifest
    for (const dep of Object.keys({ ...manifest.dependencies, ...manifest.optionalDependencies })) {
      // An optional dependency may be absent for this platform.
      if (manifest.optionalDependencies?.[dep] && !packageDir(dep, dir, root)) continue
      visit(dep, dir)
    }
  }
  for (const name of roots) visit(name, root)
  return [...found].sort()
}

/** `linux-x64` and `linux-arm64` for the machine's architecture. */
const prebuildDir = (arch: string) => `linux-${arch}`

/** Copies the closure into `nodeModules` (a package's node_modules), pruned; returns how many packages. */
export function copyRuntimeDependencies(root: string, roots: readonly string[], nodeModules: string): number {
  const rootModules = path.join(realpathSync(root), 'node_modules')
  const dirs = runtimeClosure(root, roots)
  // A nested package (a/node_modules/b) comes with its parent when the parent is copied too.
  const copied = dirs.filter((dir) => !dirs.some((other) => other !== dir && dir.startsWith(`${other}/`)))
  for (const dir of copied) {
    const relative = path.relative(rootModules, dir)
    if (relative.startsWith('..')) throw new Error(`${dir} is outside ${rootModules}`)
    cpSync(dir, path.join(nodeModules, relative), {
      recursive: true,
      filter: (source) => {
        const name = path.basename(source)
        const inside = path.relative(dir, source)
        if (inside === '') return true
        const parts = inside.split(path.sep)
        // Nested packages that are not needed at run time.
        const nested = parts.lastIndexOf('node_modules')
        if (nested >= 0 && parts[nested + 1] !== undefined) {
          const nestedName = parts[nested + 1]!.startsWith('@')
            ? `${parts[nested + 1]}/${parts[nested + 2] ?? ''}`
            : parts[nested + 1]!
          if (INSTALL_ONLY.has(nestedName) || nestedName.startsWith('@types/')) return false
        }
        if (parts.includes('prebuilds') && PLATFORM_DIR.test(name) && name !== prebuildDir(process.arch))
          return false
        // better-sqlite3's build tree: only build/Release/*.node runs.
        if (parts[0] === 'build' && parts.length >= 2 && parts[1] !== 'Release') return false
        if (name === 'test_extension.node') return false
        if (SKIPPED_DIRS.has(name)) return false
        if (SKIPPED_FILES.test(name) && !/^LICEN[CS]E/i.test(name)) return false
        return true
      },
    })
  }
  return dirs.length
}
