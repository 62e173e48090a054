import { spawnSync } from 'node:child_process'
import { closeSync, openSync, readSync, statSync, writeFileSync } from 'node:fs'
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

/** A partition of the card: where it starts and how long it is, in bytes. */
export interface Partition {
  offset: number
  bytes: number
}

/**
 * The partitions: MBR (its table at byte 446, four 16-byte entries, type at +4, LBA start at +8, sector count
 * at +12) or GPT (protective MBR type 0xEE; the header at LBA 1 gives the entry array's LBA at byte 72, the
 * count at 80 and the entry size at 84; an entry's first LBA at +32, its last at +40). UEFI 2.10 §5.2-5.3.
 * A disk without a table: the whole file.
 */
export function partitionsOf(image: string): Partition[] {
  const whole = [{ offset: 0, bytes: statSync(image).size }]
  const mbr = readAt(image, 0, SECTOR)
  if (mbr.length < SECTOR || mbr.readUInt16LE(510) !== 0xaa55) return whole
  const entries = [0, 1, 2, 3].map((i) => mbr.subarray(446 + i * 16, 462 + i * 16))
  if (entries.some((e) => e[4] === 0xee)) {
    const header = readAt(image, SECTOR, 92)
    const at = Number(header.readBigUInt64LE(72)) * SECTOR
    const count = header.readUInt32LE(80)
    const size = header.readUInt32LE(84)
    const table = readAt(image, at, count * size)
    const partitions: Partition[] = []
    for (let i = 0; i < count; i++) {
      const first = table.readBigUInt64LE(i * size + 32)
      const last = table.readBigUInt64LE(i * size + 40)
      if (first > 0n)
        partitions.push({ offset: Number(first) * SECTOR, bytes: Number(last - first + 1n) * SECTOR })
    }
    return partitions
  }
  const partitions = entries
    .filter((e) => e[4] !== 0)
    .map((e) => ({ offset: e.readUInt32LE(8) * SECTOR, bytes: e.readUInt32LE(12) * SECTOR }))
  // A whole-disk file system has no table, but 0xAA55 may still be there by chance: ext4 leaves 1 KiB blank.
  return partitions.length > 0 ? partitions : whole
}

function partitionOffsets(image: string): number[] {
  return partitionsOf(image).map((p) => p.offset)
}

/**
 * The size of the ext4 file system at `offset`: s_blocks_count_lo (byte 4) and _hi (byte 0x150, with the
 * 64bit feature) blocks of 1024 << s_log_block_size (byte 24) bytes (the kernel's Documentation/filesystems/
 * ext4/super.rst).
 */
export function ext4Bytes(image: string, offset: number): number {
  const superblock = readAt(image, offset + SUPERBLOCK, 0x154)
  const INCOMPAT_64BIT = 0x80
  const high = superblock.readUInt32LE(0x60) & INCOMPAT_64BIT ? superblock.readUInt32LE(0x150) : 0
  const blocks = high * 2 ** 32 + superblock.readUInt32LE(4)
  return blocks * (1024 << superblock.readUInt32LE(24))
}

/** The first FAT file system of the card (the Pi's boot partition): a boot sector ending in 0xAA55 that says FAT. */
export function bootPartitionOf(image: string): Partition {
  const found = partitionsOf(image).find((p) => {
    const sector = readAt(image, p.offset, SECTOR)
    return (
      sector.length === SECTOR &&
      sector.readUInt16LE(510) === 0xaa55 &&
      /FAT/.test(sector.toString('latin1', 54, 90))
    )
  })
  if (!found) throw new Error(`${image}: no FAT boot partition`)
  return found
}

/** Writes files to the top of the boot partition with mtools (`mcopy -i IMAGE@@OFFSET`): no mount, no loop device. */
export function putOnBootPartition(image: string, files: Record<string, string>, dir: string): void {
  const { offset } = bootPartitionOf(image)
  for (const [name, text] of Object.entries(files)) {
    const local = path.join(dir, name)
    writeFileSync(local, text)
    const result = spawnSync('mcopy', ['-o', '-i', `${image}@@${offset}`, local, `::/${name}`], {
      encoding: 'utf8',
    })
    if (result.status !== 0) throw new Error(`mcopy ${name}: ${result.stderr || result.error?.message}`)
  }
}

/** The names at the top of the boot partition (`mdir -b`). */
export function bootPartitionFiles(image: string): string[] {
  const { offset } = bootPartitionOf(image)
  const result = spawnSync('mdir', ['-b', '-i', `${image}@@${offset}`, '::/'], { encoding: 'utf8' })
  if (result.status !== 0) throw new Error(`mdir: ${result.stderr || result.error?.message}`)
  return result.stdout
    .split('\n')
    .filter(Boolean)
    .map((line) => line.replace(/^::\//, ''))
}

/** Reads a file at the top of the boot partition (`mtype`). */
export function readBootPartitionFile(image: string, name: string): string {
  const { offset } = bootPartitionOf(image)
  const result = spawnSync('mtype', ['-i', `${image}@@${offset}`, `::/${name}`], { encoding: 'utf8' })
  if (result.status !== 0) throw new Error(`mtype ${name}: ${result.stderr || result.error?.message}`)
  return result.stdout
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
