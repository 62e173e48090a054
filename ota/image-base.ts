import { execFile } from 'node:child_process'
import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import path from 'node:path'
import { promisify } from 'node:util'
import { putInCache } from './cache-entry.ts'
import { SYSTEM_PATH } from './image-chroot.ts'

const run = promisify(execFile)

/** Debian's archive, as apt on the build machine reaches it; the appliance's sources.list names the same. */
export const DEBIAN_MIRROR = 'http://deb.debian.org/debian'
export const DEBIAN_SECURITY = 'http://deb.debian.org/debian-security'
export const SUITE = 'bookworm'
/** raspi-firmware and the Wi-Fi chip's firmware (firmware-brcm80211) are in non-free-firmware. */
export const COMPONENTS = ['main', 'non-free-firmware'] as const

export interface BaseRoot {
  /** The cached minbase root: never written to; each build copies it. */
  dir: string
  /** The .debs debootstrap and apt downloaded, kept between builds. */
  archives: string
  /** Held while apt writes to `archives`. */
  lock: string
}

const complete = (dir: string) =>
  existsSync(path.join(dir, 'var/lib/dpkg/status')) && existsSync(path.join(dir, 'usr/bin/apt-get'))

/**
 * The minimal Debian root the appliance starts from (`debootstrap --variant=minbase`), made once and kept in
 * the OTA cache under appliance/SUITE-ARCH (a few minutes under qemu the first time). Made beside its place
 * and put there complete (ota/cache-entry.ts), so builds running at once neither wait for nor spoil each other.
 */
export async function baseRoot(cache: string, arch: string): Promise<BaseRoot> {
  const home = path.join(cache, 'appliance')
  const name = `${SUITE}-${arch}`
  const base = {
    dir: path.join(home, name),
    archives: path.join(home, `debs-${name}`),
    lock: path.join(home, `debs-${name}.lock`),
  }
  mkdirSync(path.join(base.archives, 'partial'), { recursive: true })
  if (complete(base.dir)) return base
  const work = mkdtempSync(path.join(home, `.${name}-`))
  try {
    const staged = path.join(work, 'root')
    mkdirSync(staged)
    chmodSync(staged, 0o755)
    // debootstrap's second stage mounts /proc and /sys in the root: in a mount namespace, they end with it.
    await run(
      'flock',
      [
        '--exclusive',
        base.lock,
        'unshare',
        '--mount',
        '--propagation',
        'private',
        'debootstrap',
        `--arch=${arch}`,
        '--variant=minbase',
        `--components=${COMPONENTS.join(',')}`,
        `--cache-dir=${base.archives}`,
        SUITE,
        staged,
        DEBIAN_MIRROR,
      ],
      { env: { PATH: SYSTEM_PATH }, maxBuffer: 64 * 1024 * 1024, timeout: 60 * 60_000 },
    )
    putInCache(staged, base.dir, complete)
  } finally {
    rmSync(work, { recursive: true, force: true })
  }
  return base
}
