import { existsSync } from 'node:fs'
import path from 'node:path'
import { SYSTEM_PATH } from './image-chroot.ts'

/** The programs `ota image` runs on the build machine, and the Debian package of each. */
export const IMAGE_TOOLS: Readonly<Record<string, string>> = {
  debootstrap: 'debootstrap',
  'qemu-aarch64-static': 'qemu-user-static',
  unshare: 'util-linux',
  setpriv: 'util-linux',
  flock: 'util-linux',
  'mkfs.ext4': 'e2fsprogs',
  'mkfs.vfat': 'dosfstools',
  mcopy: 'mtools',
  sfdisk: 'fdisk',
  xz: 'xz-utils',
}

/** Throws, naming the packages to install, unless every tool `ota image` runs is on the system PATH. */
export function checkImageTools(): void {
  const missing = Object.keys(IMAGE_TOOLS).filter(
    (tool) => !SYSTEM_PATH.split(':').some((dir) => existsSync(path.join(dir, tool))),
  )
  if (missing.length === 0) return
  const packages = [...new Set(missing.map((tool) => IMAGE_TOOLS[tool]))]
  throw new Error(
    `ota image needs ${missing.join(', ')}: apt-get install --no-install-recommends ${packages.join(' ')}`,
  )
}
