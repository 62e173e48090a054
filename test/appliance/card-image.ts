import { spawnSync } from 'node:child_process'
import { closeSync, openSync, readSync } from 'node:fs'
import path from 'node:path'

/** An ext4 file system in a card image: where it starts, and its label. */
export interface Ext4Volume {
  offset: number
  label: string
}

const SECTOR = 512
/** The ext4 superblock sits 1024 bytes into the file system; its magic 0xEF53 at byte 56, the label at 120. */
const SUPERBLOCK = 1024

function readAt(file: string, offset: number, length: number): Buffer {
  const fd = openSync(file, 'r')
  try {
    const buffer = Buffer.alloc(length)
    const read = readSync(fd, buffer, 0, length, offset)
    return buffer.subarray(0, read)
  } finally {
    closeSync(fd)
  }
}

function ext4At(image: string, offset: number): Ext4Volume | null {
  const superblock = readAt(image, offset + SUPERBLOCK, 256)
  if (superblock.length < 136 || superblock.readUInt16LE(56) !== 0xef53) return null
  const label = superblock.subarray(120, 136).toString('latin1').replace(/\0.*$/s, '')
  return { offset, label }
}

/**
 * The partitions' start offsets: MBR (its table at byte 446, four 16-byte entries, LBA start at +8) or GPT
 * (protective MBR type 0xEE; the header at LBA 1 gives the entry array's LBA at byte 72, the count at 80 and
 * the entry size at 84; an entry's first LBA at +32). UEFI 2.10 §5.2-5.3. A disk without a table: [0].
 */
function partitionOffsets(image: string): number[] {
  const mbr = readAt(image, 0, SECTOR)
  if (mbr.length < SECTOR || mbr.readUInt16LE(510) !== 0xaa55) return [0]
  const entries = [0, 1, 2, 3].map((i) => mbr.subarray(446 + i * 16, 462 + i * 16))
  if (entries.some((e) => e[4] === 0xee)) {
    const header = readAt(image, SECTOR, 92)
    const at = Number(header.readBigUInt64LE(72)) * SECTOR
    const count = header.readUInt32LE(80)
    const size = header.readUInt32LE(84)
    const table = readAt(image, at, count * size)
    const offsets: number[] = []
    for (let i = 0; i < count; i++) {
      const first = table.readBigUInt64LE(i * size + 32)
      if (first > 0n) offsets.push(Number(first) * SECTOR)
    }
    return offsets
  }
  const offsets = entries.filter((e) => e[4] !== 0).map((e) => e.readUInt32LE(8) * SECTOR)
  // A whole-disk file system has no table, but 0xAA55 may still be there by chance: ext4 leaves 1 KiB blank.
  return offsets.length > 0 ? offsets : [0]
}

/** Every ext4 file system in the image (a whole-disk one too). */
export function ext4Volumes(image: string): Ext4Volume[] {
  const whole = ext4At(image, 0)
  if (whole) return [whole]
  return partitionOffsets(image)
    .map((offset) => ext4At(image, offset))
    .filter((v): v is Ext4Volume => v !== null)
}

/** debugfs on the file system at `offset` (e2fsprogs' unix I/O takes `FILE?offset=N`), read-only. */
function debugfs(image: string, offset: number, request: string): string {
  const result = spawnSync('debugfs', ['-R', request, `${image}?offset=${offset}`], { encoding: 'utf8' })
  if (result.status !== 0)
    throw new Error(`debugfs -R '${request}': ${result.stderr || result.error?.message}`)
  return result.stdout
}

/**
 * The kernel and initrd the image boots, copied out of the /boot of its root file system (the ext4 volume
 * labelled `label`) into `dir`: `-kernel` and `-initrd` want files. The newest version when there are
 * several. No mount, no loop device.
 */
export function bootFilesOf(
  image: string,
  dir: string,
  label = 'RASPIROOT',
): { kernel: string; initrd: string } {
  const volumes = ext4Volumes(image)
  const root = volumes.find((v) => v.label === label)
  if (!root) {
    const found = volumes.map((v) => `"${v.label}" at ${v.offset}`).join(', ') || 'none'
    throw new Error(`${image}: no ext4 file system labelled ${label} (found: ${found})`)
  }
  const names = debugfs(image, root.offset, 'ls -p /boot')
    .split('\n')
    .map((line) => line.split('/')[5] ?? '')
    .filter(Boolean)
  const newest = (prefix: string) =>
    names
      .filter((n) => n.startsWith(prefix))
      .sort((a, b) => a.localeCompare(b, 'en', { numeric: true }))
      .pop()
  const kernelName = newest('vmlinuz-')
  const initrdName = newest('initrd.img-')
  if (!kernelName || !initrdName)
    throw new Error(`${image}: /boot of ${label} holds no vmlinuz-* and initrd.img-* (${names.join(', ')})`)
  const kernel = path.join(dir, kernelName)
  const initrd = path.join(dir, initrdName)
  debugfs(image, root.offset, `dump /boot/${kernelName} ${kernel}`)
  debugfs(image, root.offset, `dump /boot/${initrdName} ${initrd}`)
  return { kernel, initrd }
}
