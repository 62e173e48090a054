import { copyFileSync, cpSync, existsSync, mkdirSync, readFileSync, realpathSync } from 'node:fs'
import path from 'node:path'

/**
 * The production dependencies a packaged hub loads at run time (the externals of bundle.ts and what they
 * require), copied from the build machine's node_modules, with their native addons compiled for the package's
 * architecture. Only what runs is kept: no sources, objects, headers, tests, and no binary built or prebuilt
 * for another machine.
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
// Also the npm packages' own packaging and VCS files (.npmignore, .gitignore: lintian errors in a .deb).
const SKIPPED_FILES =
  /\.(a|o|c|cc|cpp|h|hpp|lzz|gyp|gypi|mk|map|md|markdown|ts|tsbuildinfo)$|^Makefile$|^\.(npmignore|gitignore|gitattributes)$/

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

/**
 * Copies the closure into `nodeModules` (a package's node_modules), pruned, with the native addons compiled
 * for the package's architecture (ota/addons.ts) in place of anything built or prebuilt in the repository;
 * returns how many packages.
 */
export function copyRuntimeDependencies(
  root: string,
  roots: readonly string[],
  nodeModules: string,
  addons: ReadonlyMap<string, { file: string; target: string }>,
): number {
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
        // Binaries built or prebuilt for the repository's machine: the package's own come from ota/addons.ts.
        if (parts.includes('prebuilds') || parts[0] === 'build') return false
        if (SKIPPED_DIRS.has(name)) return false
        if (SKIPPED_FILES.test(name) && !/^LICEN[CS]E/i.test(name)) return false
        return true
      },
    })
  }
  for (const [name, addon] of addons) {
    const target = path.join(nodeModules, name, 'build/Release', `${addon.target}.node`)
    mkdirSync(path.dirname(target), { recursive: true })
    copyFileSync(addon.file, target)
  }
  return dirs.length
}
