import { execFileSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs'
import path from 'node:path'
import type { TargetArchitecture } from './architectures.ts'
import { putInCache } from './cache-entry.ts'

/**
 * The target's system libraries the native addons link against, and their headers: Debian's own packages for
 * that architecture (`apt-get download libgs-dev:arm64 …`, checked by apt against the archive's signed
 * indexes), unpacked into a directory of the cache. Unpacked rather than installed as multiarch packages:
 * `Multi-Arch: same` packages must have the very version of the build machine's own, and a foreign
 * architecture's index that lags the mirror then blocks the install; linking needs only the files.
 */
const PACKAGES = ['libgs-dev', 'libgs10', 'libudev-dev', 'libudev1'] as const

export interface TargetLibraries {
  /** -I directory (ghostscript/iapi.h, libudev.h). */
  include: string
  /** -L directory (libgs.so, libudev.so). */
  lib: string
}

export function targetLibraries(cache: string, target: TargetArchitecture): TargetLibraries {
  const dir = path.join(cache, 'target-libraries', target.debian)
  const libs = { include: path.join(dir, 'usr/include'), lib: path.join(dir, 'usr/lib', target.triplet) }
  const complete = () =>
    existsSync(path.join(libs.lib, 'libgs.so')) && existsSync(path.join(libs.lib, 'libudev.so'))
  if (complete()) return libs
  mkdirSync(path.dirname(dir), { recursive: true })
  const work = mkdtempSync(path.join(path.dirname(dir), '.fetch-'))
  try {
    const debs = path.join(work, 'debs')
    mkdirSync(debs)
    try {
      execFileSync('apt-get', ['download', '-qq', ...PACKAGES.map((p) => `${p}:${target.debian}`)], {
        cwd: debs,
        stdio: ['ignore', 'ignore', 'pipe'],
      })
    } catch (error) {
      const stderr = String((error as { stderr?: Buffer }).stderr ?? '').trim()
      throw new Error(
        `apt-get download of ${target.debian} libraries failed (${stderr.split('\n').pop()}): ` +
          `scripts/setup.sh adds the architecture to dpkg (dpkg --add-architecture ${target.debian}; apt-get update)`,
      )
    }
    const staged = path.join(work, 'root')
    for (const deb of readdirSync(debs)) execFileSync('dpkg-deb', ['-x', path.join(debs, deb), staged])
    putInCache(staged, dir, complete)
  } finally {
    rmSync(work, { recursive: true, force: true })
  }
  return libs
}
