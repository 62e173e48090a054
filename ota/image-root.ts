import { execFile } from 'node:child_process'
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs'
import path from 'node:path'
import { promisify } from 'node:util'
import { type BaseRoot, COMPONENTS, DEBIAN_MIRROR, DEBIAN_SECURITY, SUITE } from './image-base.ts'
import { inChroot } from './image-chroot.ts'
import { DPKG_NO_DOCS, ENABLED_UNITS, installApplianceFiles } from './image-files.ts'
import { ROOT_LABEL } from './image-layout.ts'

const run = promisify(execFile)

/**
 * What the appliance runs besides the hub and the kernel, all from Debian's archive, without recommends:
 * raspi-firmware (the Pi's boot firmware, and hooks that copy each kernel, its initrd and the DTBs to the boot
 * partition with a config.txt and cmdline.txt); initramfs-tools for the kernel's initrd; firmware-brcm80211 for
 * the Pi's Wi-Fi; systemd as init, its
 * networkd and resolved for the network, timesyncd for the clock; D-Bus, without which logind does not run
 * (it turns a power key into a clean shutdown, a virtual machine's included); wpa_supplicant; the SSH server;
 * cloud-guest-utils (growpart) and e2fsprogs to grow the root at the first boot.
 */
export const APPLIANCE_PACKAGES = [
  'raspi-firmware',
  'initramfs-tools',
  'firmware-brcm80211',
  'systemd-sysv',
  'systemd-timesyncd',
  'systemd-resolved',
  'udev',
  'dbus',
  'kmod',
  'iproute2',
  'wpasupplicant',
  'openssh-server',
  // DNS-SD: tills find the hub's LAN print API without configuration (docs/lan-printing.md).
  'avahi-daemon',
  'avahi-utils',
  'ca-certificates',
  'cloud-guest-utils',
  'fdisk',
  'e2fsprogs',
]

/** Debian's arm64 kernel: the Pi 3 and 4 device trees and drivers are upstream's. */
export const KERNEL_PACKAGES = ['linux-image-arm64']

export const HOSTNAME = 'print-hub'

/** The characters a cloud URL may have in /etc/default/print-hub (a systemd EnvironmentFile). */
export const CLOUD_URL = /^https?:\/\/[A-Za-z0-9.-]+(:[0-9]{1,5})?(\/[A-Za-z0-9._~/-]*)?$/

export interface RootOptions {
  base: BaseRoot
  /** Where the root is made: a copy of the base. */
  dir: string
  /** packaging/appliance */
  applianceFiles: string
  /** The hub's arm64 package. */
  deb: string
  cloudUrl: string
}

/**
 * Makes the appliance's root in `dir` from the cached base: its packages and the hub's, the first-boot
 * units, and nothing that must be unique to one appliance (machine id, SSH host keys) or that it does not
 * need (documentation, apt's package lists). The boot partition's files are left in `dir`/boot/firmware.
 */
export async function makeRoot(options: RootOptions): Promise<void> {
  const { base, dir } = options
  await run('cp', ['-a', '--reflink=auto', `${base.dir}/.`, dir])
  const file = (inside: string) => path.join(dir, inside)
  const write = (inside: string, text: string, mode = 0o644) => {
    mkdirSync(path.dirname(file(inside)), { recursive: true })
    writeFileSync(file(inside), text, { mode })
  }

  installApplianceFiles(options.applianceFiles, dir)
  await removeDocumentation(dir)
  const components = COMPONENTS.join(' ')
  write(
    'etc/apt/sources.list',
    [
      `deb ${DEBIAN_MIRROR} ${SUITE} ${components}`,
      `deb ${DEBIAN_MIRROR} ${SUITE}-updates ${components}`,
      `deb ${DEBIAN_SECURITY} ${SUITE}-security ${components}`,
      '',
    ].join('\n'),
  )
  write('etc/apt/apt.conf.d/00print-hub-appliance', 'Acquire::Languages "none";\nAcquire::Retries "3";\n')
  // Only while building: the .debs are kept in the shared archives, and no service starts in the chroot
  // (invoke-rc.d's policy-rc.d convention).
  write('etc/apt/apt.conf.d/99print-hub-build', 'APT::Keep-Downloaded-Packages "true";\n')
  write('usr/sbin/policy-rc.d', '#!/bin/sh\nexit 101\n', 0o755)
  rmSync(file('etc/resolv.conf'), { force: true })
  copyFileSync('/etc/resolv.conf', file('etc/resolv.conf'))
  // raspi-firmware's hooks write config.txt and cmdline.txt from this file, looking at the machine they run
  // on where it is unset, which here is the build machine: so all is set. The root by its label; the consoles:
  // the serial port on the 40-pin header (the mini UART, ttyS1 under Debian's arm64 kernel) and the screen;
  // no cma= (the hook's default of 64M does not boot a Pi 4, its own comment says; the hub draws nothing).
  // A conffile of raspi-firmware: apt keeps this version (--force-confold).
  write('etc/default/raspi-firmware', `ROOTPART=LABEL=${ROOT_LABEL}\nCONSOLES="ttyS1,115200 tty0"\nCMA=0\n`)
  write('etc/hostname', `${HOSTNAME}\n`)
  write(
    'etc/hosts',
    `127.0.0.1\tlocalhost\n127.0.1.1\t${HOSTNAME}\n::1\t\tlocalhost ip6-localhost ip6-loopback\n`,
  )
  mkdirSync(file('boot/firmware'), { recursive: true })

  const deb = `/tmp/${path.basename(options.deb)}`
  copyFileSync(options.deb, file(deb))
  const chroot = (argv: string[], apt = false) =>
    inChroot({ root: dir, argv, ...(apt && { archives: base.archives, lockFile: base.lock }) })
  const aptInstall = (packages: string[]) =>
    chroot(
      [
        'apt-get',
        'install',
        '-y',
        '--no-install-recommends',
        '-o',
        'Dpkg::Options::=--force-confdef',
        '-o',
        'Dpkg::Options::=--force-confold',
        ...packages,
      ],
      true,
    )
  await chroot(['apt-get', 'update'], true)
  await aptInstall([...APPLIANCE_PACKAGES, deb])
  // The kernel last, on its own, so that its initrd is made once (minutes under qemu): installed with the rest,
  // it is made when the kernel is configured, then again when update-initramfs runs as the trigger that
  // packages with initramfs hooks (udev, kmod, raspi-firmware…) activate.
  await aptInstall([...KERNEL_PACKAGES])
  await chroot(['systemctl', 'enable', ...ENABLED_UNITS])
  // No password for anyone: root logs in by SSH key only (docs/appliance.md).
  await chroot(['passwd', '--lock', 'root'])
  setCloud(file('etc/default/print-hub'), options.cloudUrl)

  // What one appliance must not share with another, made at its first boot.
  writeFileSync(file('etc/machine-id'), '')
  rmSync(file('var/lib/dbus/machine-id'), { force: true })
  for (const entry of readdirSync(file('etc/ssh')))
    if (/^ssh_host_.*_key(\.pub)?$/.test(entry)) rmSync(file(`etc/ssh/${entry}`))
  // What the build needed and the appliance does not.
  rmSync(file(deb))
  rmSync(file('usr/sbin/policy-rc.d'))
  rmSync(file('etc/apt/apt.conf.d/99print-hub-build'))
  rmSync(file('etc/resolv.conf'))
  symlinkSync('../run/systemd/resolve/stub-resolv.conf', file('etc/resolv.conf'))
  for (const emptied of ['var/lib/apt/lists', 'var/cache/apt', 'var/log', 'tmp', 'var/tmp'])
    await run('find', [file(emptied), '-mindepth', '1', '-not', '-type', 'd', '-delete'])
  mkdirSync(file('var/log/journal'), { recursive: true })
  await removeDocumentation(dir)
  if (!existsSync(file(DPKG_NO_DOCS.to))) throw new Error('the dpkg configuration went missing')
}

/** /etc/default/print-hub with PRINT_HUB_CLOUD set: the package's file, kept as it is otherwise. */
export function setCloud(defaults: string, cloudUrl: string): void {
  if (!CLOUD_URL.test(cloudUrl)) throw new Error(`not a cloud URL: ${cloudUrl}`)
  const text = readFileSync(defaults, 'utf8')
  if (!/^PRINT_HUB_CLOUD=/m.test(text)) throw new Error(`${defaults} has no PRINT_HUB_CLOUD line`)
  writeFileSync(defaults, text.replace(/^PRINT_HUB_CLOUD=.*$/m, `PRINT_HUB_CLOUD=${cloudUrl}`))
}

/** What dpkg's path excludes (packaging/appliance/etc/dpkg-no-docs.cfg) keep out, removed from the base too. */
async function removeDocumentation(dir: string): Promise<void> {
  const share = (sub: string) => path.join(dir, 'usr/share', sub)
  await run('find', [
    share('doc'),
    '-mindepth',
    '2',
    '-not',
    '-type',
    'd',
    '-not',
    '-name',
    'copyright',
    '-delete',
  ])
  await run('find', [share('doc'), '-mindepth', '2', '-type', 'd', '-empty', '-delete'])
  for (const sub of ['man', 'info', 'lintian', 'bug', 'locale'])
    if (existsSync(share(sub)))
      await run('find', [
        share(sub),
        '-mindepth',
        '1',
        '-maxdepth',
        '1',
        '-not',
        '-name',
        'locale.alias',
        '-exec',
        'rm',
        '-rf',
        '{}',
        '+',
      ])
}

/** Moves the boot partition's files (written by raspi-firmware's hooks) out of the root, into `to`. */
export function takeBootFiles(root: string, to: string): void {
  const firmware = path.join(root, 'boot/firmware')
  mkdirSync(to, { recursive: true })
  for (const entry of readdirSync(firmware)) renameSync(path.join(firmware, entry), path.join(to, entry))
}
