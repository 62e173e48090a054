import { describe, expect, it } from 'vitest'
import {
  ALIGNMENT,
  BOOT_PARTITION_BYTES,
  imageLayout,
  MIB,
  rootFileSystemBytes,
  SECTOR,
  sfdiskScript,
} from '../../ota/image-layout.ts'

describe('the card image layout', () => {
  it('puts the boot partition at 4 MiB and the root right after it, both on 4 MiB boundaries', () => {
    const layout = imageLayout(600 * MIB)
    expect(layout.boot).toEqual({ startBytes: 4 * MIB, sizeBytes: BOOT_PARTITION_BYTES, type: '0c' })
    expect(layout.root).toEqual({ startBytes: 260 * MIB, sizeBytes: 600 * MIB, type: '83' })
    expect(layout.totalBytes).toBe(860 * MIB)
  })

  it('aligns the root up when the boot partition does not end on a boundary', () => {
    const layout = imageLayout(100 * MIB, 255 * MIB)
    expect(layout.root.startBytes).toBe(260 * MIB)
    expect(layout.root.startBytes % ALIGNMENT).toBe(0)
    expect(layout.root.startBytes).toBeGreaterThanOrEqual(layout.boot.startBytes + layout.boot.sizeBytes)
  })

  it('refuses sizes that are not whole MiB, and images an MBR cannot describe', () => {
    expect(() => imageLayout(MIB + 1)).toThrow(/whole number of MiB/)
    expect(() => imageLayout(0)).toThrow(/positive/)
    expect(() => imageLayout(-MIB)).toThrow(/positive/)
    expect(() => imageLayout(2048 * 1024 * MIB)).toThrow(/too large for an MBR/)
  })

  it('sizes the root file system as its contents, a quarter more, and 128 MiB free, in whole MiB', () => {
    expect(rootFileSystemBytes(0)).toBe(128 * MIB)
    expect(rootFileSystemBytes(400 * MIB)).toBe(628 * MIB)
    expect(rootFileSystemBytes(400 * MIB + 1) % MIB).toBe(0)
    expect(() => rootFileSystemBytes(Number.NaN)).toThrow()
  })

  it('gives sfdisk the partitions in 512-byte sectors, the boot partition active', () => {
    const layout = imageLayout(600 * MIB)
    expect(sfdiskScript(layout)).toBe(
      [
        'label: dos',
        'label-id: 0x50724875',
        'unit: sectors',
        `start=${(4 * MIB) / SECTOR}, size=${BOOT_PARTITION_BYTES / SECTOR}, type=0c, bootable`,
        `start=${(260 * MIB) / SECTOR}, size=${(600 * MIB) / SECTOR}, type=83`,
        '',
      ].join('\n'),
    )
  })
})
