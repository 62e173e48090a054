import { execFileSync, spawn } from 'node:child_process'
import { mkdirSync, readdirSync, statSync } from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { imageFilename } from '../../ota/image.ts'
import { BOOT_LABEL, MIB, ROOT_LABEL } from '../../ota/image-layout.ts'
import { ROOT } from '../helpers/cli.ts'
import { tempDir } from '../helpers/temp-dir.ts'

/**
 * `ota image` end to end, without booting: builds the card image (minutes: the hub's package, then apt under
 * qemu-user-static; the first run also debootstraps), then reads it as files. The partition table with sfdisk,
 * each partition cut out with dd, the root's files with debugfs and the boot partition's with mtools: no
 * loop device, no mount. Not in `npm test`: `npm run test:image` (docs/appliance.md).
 */
const CLOUD = 'https://print.example.com'
const VERSION = '0.1.0'

function runOta(args: string[], env: NodeJS.ProcessEnv) {
  return new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'ota/cli.ts', ...args], {
      cwd: ROOT,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (c: Buffer) => {
      stdout += c
    })
    child.stderr.on('data', (c: Buffer) => {
      stderr += c
    })
    child.once('close', (status) => resolve({ status, stdout, stderr }))
  })
}

const text = (cmd: string, args: string[]) =>
  execFileSync(cmd, args, {
    encoding: 'utf8',
    maxBuffer: 64 * MIB,
    stdio: ['ignore', 'pipe', 'pipe'],
    // mtools refuses a partition image whose size is no whole number of its made-up tracks.
    env: { ...process.env, MTOOLS_SKIP_CHECK: '1' },
  })

describe.skipIf(process.getuid?.() !== 0)('ota image', () => {
  const dir = tempDir('ota-image-')
  const out = path.join(dir.path, 'out')
  let printed: Record<string, unknown>
  let raw: string
  let rootFs: string
  let bootFs: string
  const debugfs = (request: string) => text('debugfs', ['-R', request, rootFs])
  const rootFile = (inside: string) => debugfs(`cat ${inside}`)
  /** A directory's entries: debugfs's `ls -p` gives /inode/mode/uid/gid/name/size/ a line. */
  const entries = (inside: string) =>
    debugfs(`ls -p ${inside}`)
      .split('\n')
      .map((line) => line.split('/')[5])
      .filter((name): name is string => !!name && name !== '.' && name !== '..')

  beforeAll(async () => {
    text(process.execPath, [
      '--import',
      'tsx',
      path.join(ROOT, 'ota/cli.ts'),
      'keygen',
      '--out',
      path.join(dir.path, 'key'),
    ])
    const result = await runOta(['image', '--version', VERSION, '--cloud', CLOUD, '--out', out], {
      OTA_SIGNING_KEY: path.join(dir.path, 'key/release-key.pem'),
    })
    if (result.status !== 0) throw new Error(`ota image: exit ${result.status}\n${result.stderr}`)
    printed = JSON.parse(result.stdout)
    raw = path.join(dir.path, 'image.img')
    execFileSync('sh', [
      '-c',
      'xz --decompress --stdout "$1" >"$2"',
      'sh',
      path.join(out, imageFilename(VERSION, 'arm64')),
      raw,
    ])
    const table = JSON.parse(text('sfdisk', ['--json', raw])).partitiontable
    mkdirSync(path.join(dir.path, 'parts'))
    const cut = (index: number, name: string) => {
      const part = table.partitions[index]
      const file = path.join(dir.path, 'parts', name)
      text('dd', [
        `if=${raw}`,
        `of=${file}`,
        'bs=512',
        `skip=${part.start}`,
        `count=${part.size}`,
        'status=none',
      ])
      return file
    }
    bootFs = cut(0, 'boot.vfat')
    rootFs = cut(1, 'root.ext4')
  }, 60 * 60_000)
  afterAll(() => dir.remove())

  it('writes the compressed image and its SHA-256 in sha256sum format, and reports its sizes', () => {
    const filename = imageFilename(VERSION, 'arm64')
    expect(readdirSync(out).sort()).toEqual([filename, `${filename}.sha256`])
    expect(printed).toMatchObject({ version: VERSION, architecture: 'arm64', filename })
    expect(printed.size_bytes).toBe(statSync(path.join(out, filename)).size)
    expect(printed.raw_size_bytes).toBe(statSync(raw).size)
    expect(execFileSync('sha256sum', ['--check', `${filename}.sha256`], { cwd: out, encoding: 'utf8' })).toBe(
      `${filename}: OK\n`,
    )
    // Small: a minimal Debian, the kernel and firmware, the hub (its Node.js runtime is most of it).
    expect(printed.size_bytes as number).toBeLessThan(400 * MIB)
    expect(printed.raw_size_bytes as number).toBeLessThan(1536 * MIB)
    console.info(
      `image: ${((printed.size_bytes as number) / MIB).toFixed(0)} MiB compressed, ` +
        `${((printed.raw_size_bytes as number) / MIB).toFixed(0)} MiB raw, built in ${printed.build_seconds} s`,
    )
  })

  it('has an MBR with the boot partition (FAT32, active) and the root (Linux), both labelled', () => {
    const table = JSON.parse(text('sfdisk', ['--json', raw])).partitiontable
    expect(table.label).toBe('dos')
    expect(
      table.partitions.map((p: { type: string; bootable?: boolean }) => [p.type, p.bootable ?? false]),
    ).toEqual([
      ['c', true],
      ['83', false],
    ])
    expect(table.partitions[0].start * 512).toBe(4 * MIB)
    const probe = (file: string) => text('blkid', ['--probe', '--output', 'export', file])
    expect(probe(bootFs)).toMatch(new RegExp(`^LABEL=${BOOT_LABEL}$[\\s\\S]*^TYPE=vfat$`, 'm'))
    expect(probe(rootFs)).toMatch(new RegExp(`^LABEL=${ROOT_LABEL}$[\\s\\S]*^TYPE=ext4$`, 'm'))
    text('e2fsck', ['-fn', rootFs])
    text('fsck.vfat', ['-n', bootFs])
  })

  it('boots from the boot partition: kernel, initrd, DTBs, config.txt and a cmdline.txt naming the root by label', () => {
    const files = text('mdir', ['-b', '-i', bootFs, '::'])
    for (const name of [
      'config.txt',
      'cmdline.txt',
      'bcm2837-rpi-3-b.dtb',
      'bcm2711-rpi-4-b.dtb',
      'start4.elf',
    ])
      expect(files).toContain(`::/${name}`)
    const kernel = files.match(/^::\/(vmlinuz-[^\s]+)$/m)?.[1]
    const initrd = files.match(/^::\/(initrd\.img-[^\s]+)$/m)?.[1]
    expect(kernel).toBeDefined()
    expect(initrd).toBe(kernel?.replace('vmlinuz', 'initrd.img'))
    const config = text('mtype', ['-i', bootFs, '::config.txt'])
    expect(config).toMatch(/^arm_64bit=1$/m)
    expect(config).toContain(`kernel=${kernel}\n`)
    expect(config).toContain(`initramfs ${initrd}\n`)
    const cmdline = text('mtype', ['-i', bootFs, '::cmdline.txt'])
    expect(cmdline).toMatch(new RegExp(`root=LABEL=${ROOT_LABEL}\\b`))
    expect(cmdline).not.toMatch(/\bcma=/)
  })

  it('holds nothing that must be unique to one appliance, and no password', () => {
    expect(rootFile('/etc/machine-id')).toBe('')
    expect(entries('/etc/ssh').filter((name) => name.startsWith('ssh_host_'))).toEqual([])
    expect(entries('/etc/ssh')).toContain('sshd_config')
    const rootEntry = rootFile('/etc/shadow')
      .split('\n')
      .find((line) => line.startsWith('root:'))
    expect(rootEntry?.split(':')[1]).toMatch(/^!/)
    // Every other account has no password either.
    for (const line of rootFile('/etc/shadow').trim().split('\n'))
      expect(line.split(':')[1], line).toMatch(/^[!*]/)
  })

  it('has the hub installed and pointed at the cloud it was built for', () => {
    const status = rootFile('/var/lib/dpkg/status')
    expect(status).toMatch(/^Package: print-hub\nStatus: install ok installed\n/m)
    expect(rootFile('/etc/default/print-hub')).toMatch(new RegExp(`^PRINT_HUB_CLOUD=${CLOUD}$`, 'm'))
    for (const pkg of [
      'linux-image-arm64',
      'raspi-firmware',
      'systemd-timesyncd',
      'openssh-server',
      'cloud-guest-utils',
    ])
      expect(status).toMatch(new RegExp(`^Package: ${pkg}\nStatus: install ok installed\n`, 'm'))
    for (const pkg of ['gcc', 'cpp', 'make', 'man-db'])
      expect(status).not.toMatch(new RegExp(`^Package: ${pkg}\n`, 'm'))
  })

  it('enables the first-boot units and the clock sync the hub waits for', () => {
    const wants = entries('/etc/systemd/system/sysinit.target.wants')
    for (const unit of [
      'print-hub-txt.service',
      'print-hub-ssh-keys.service',
      'systemd-time-wait-sync.service',
      'systemd-timesyncd.service',
    ])
      expect(wants).toContain(unit)
    expect(entries('/etc/systemd/system/multi-user.target.wants')).toContain('print-hub.service')
    expect(rootFile('/etc/systemd/system/print-hub.service.d/appliance.conf')).toMatch(
      /^After=time-sync\.target/m,
    )
    expect(rootFile('/etc/systemd/journald.conf.d/appliance.conf')).toMatch(/^SystemMaxUse=\d+M$/m)
    expect(rootFile('/etc/systemd/system/ssh.service.d/appliance.conf')).toContain(
      'ConditionFileNotEmpty=/root/.ssh/authorized_keys',
    )
  })

  it('carries no documentation but the copyright files', () => {
    const docs = path.join(dir.path, 'doc')
    mkdirSync(docs)
    debugfs(`rdump /usr/share/doc ${docs}`)
    const files = text('find', [docs, '-type', 'f']).trim().split('\n')
    expect(files.length).toBeGreaterThan(50)
    expect(files.filter((file) => path.basename(file) !== 'copyright')).toEqual([])
    expect(entries('/usr/share/man')).toEqual([])
  })
})
