/**
 * Where the two partitions of the appliance's card image lie. An MBR (DOS) partition table, as the Raspberry
 * Pi's boot ROM and EEPROM read it: the boot partition (FAT32, type 0x0c, marked active) first, then the root
 * file system (Linux, 0x83). Both start on a 4 MiB boundary, the erase-block size SD cards are laid out for
 * (SD Association, Physical Layer Simplified Specification, "Allocation Unit"), as Debian's Raspberry Pi
 * images do.
 */
export const MIB = 1024 * 1024
export const SECTOR = 512
export const ALIGNMENT = 4 * MIB
/** raspi-firmware keeps one kernel, initrd and the DTBs there (about 70 MB): room for an upgrade to write. */
export const BOOT_PARTITION_BYTES = 256 * MIB
export const BOOT_LABEL = 'RASPIFIRM'
export const ROOT_LABEL = 'RASPIROOT'

export interface Partition {
  startBytes: number
  sizeBytes: number
  /** MBR partition type. */
  type: '0c' | '83'
}

export interface ImageLayout {
  boot: Partition
  root: Partition
  /** The image file's size: the end of the root partition. */
  totalBytes: number
}

const alignUp = (bytes: number, to: number) => Math.ceil(bytes / to) * to

/**
 * The size of an ext4 file system made by `mkfs.ext4 -d` from a tree of `contentBytes` (du's apparent size):
 * the contents, a quarter more for inodes, the journal and block rounding, 128 MiB free for the first boot
 * (logs, the hub's state) before the root is grown to the card; whole MiB.
 */
export function rootFileSystemBytes(contentBytes: number): number {
  if (!Number.isFinite(contentBytes) || contentBytes < 0) throw new Error(`bad content size ${contentBytes}`)
  return alignUp(Math.ceil(contentBytes * 1.25) + 128 * MIB, MIB)
}

export function imageLayout(rootBytes: number, bootBytes = BOOT_PARTITION_BYTES): ImageLayout {
  for (const [name, bytes] of [
    ['boot', bootBytes],
    ['root', rootBytes],
  ] as const)
    if (!Number.isSafeInteger(bytes) || bytes <= 0 || bytes % MIB !== 0)
      throw new Error(`the ${name} partition must be a positive whole number of MiB (got ${bytes})`)
  const boot: Partition = { startBytes: ALIGNMENT, sizeBytes: bootBytes, type: '0c' }
  const root: Partition = {
    startBytes: alignUp(boot.startBytes + boot.sizeBytes, ALIGNMENT),
    sizeBytes: rootBytes,
    type: '83',
  }
  const totalBytes = root.startBytes + root.sizeBytes
  // An MBR entry holds 32-bit sector numbers (2 TiB with 512-byte sectors).
  if (totalBytes / SECTOR > 0xffff_ffff) throw new Error('the image is too large for an MBR')
  return { boot, root, totalBytes }
}

/** sfdisk(8)'s input for `layout`: a DOS label with a fixed disk identifier, so that builds are repeatable. */
export function sfdiskScript(layout: ImageLayout, diskId = 0x5072_4875): string {
  const entry = (p: Partition, bootable: boolean) =>
    `start=${p.startBytes / SECTOR}, size=${p.sizeBytes / SECTOR}, type=${p.type}${bootable ? ', bootable' : ''}`
  return [
    'label: dos',
    `label-id: 0x${diskId.toString(16).padStart(8, '0')}`,
    'unit: sectors',
    entry(layout.boot, true),
    entry(layout.root, false),
    '',
  ].join('\n')
}
