import { spawn } from 'node:child_process'
import { chmodSync, cpSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { type DebianRoot, debianRoot } from '../helpers/debian-root.ts'

/**
 * A throwaway card image to prove the QEMU harness on, until `ota image` makes the real one: the cached
 * Debian 12 arm64 minbase root (test/helpers/debian-root.ts) copied, Debian's arm64 kernel, systemd, udev and
 * D-Bus installed into the copy by apt-get in a chroot (its ARM programs run by qemu-user-static), and the
 * copy made into an ext4 file system labelled RASPIROOT by `mkfs.ext4 -d` (no loop device, no mount; a
 * whole-disk file system without a partition table, which the kernel boots as root=LABEL=RASPIROOT all the
 * same). The kernel and initrd are left beside the image for `-kernel` and `-initrd`.
 *
 * In it, `appliance-proof.service` runs once the network is up and writes `APPLIANCE-PROOF …` lines on the
 * console: what it fetched from http://10.0.2.100:8080/ (a guestfwd), whether it could open the host's port
 * named by `appliance.canary=PORT` on the kernel command line through the host alias 10.0.2.2 (it must not:
 * `restrict=on`), the owner of /dev/ttyUSB0 once udev made it, and the reply to an ESC/POS status query
 * (DLE EOT 1) written there after a line of text.
 */
export interface ProofImage {
  image: string
  kernel: string
  initrd: string
  /** Milliseconds apt-get took (the kernel's initramfs made under emulation included). */
  installMs: number
  /** Bytes of the image file. */
  sizeBytes: number
}

const PATH = '/usr/sbin:/usr/bin:/sbin:/bin'
const PACKAGES = ['linux-image-arm64', 'systemd-sysv', 'udev', 'dbus', 'kmod']
export const PROOF_MARK = 'APPLIANCE-PROOF'

const PROOF_SCRIPT = `#!/bin/bash
# The appliance harness's proof (test/appliance/proof-image.ts). Lines start with ${PROOF_MARK}.
say() { echo "${PROOF_MARK} $*"; }
canary=$(sed -n 's/.*appliance\\.canary=\\([0-9]*\\).*/\\1/p' /proc/cmdline)
say "address $(hostname -I)"
if exec 3<>/dev/tcp/10.0.2.100/8080; then
  printf 'GET /hello HTTP/1.0\\r\\nHost: 10.0.2.100:8080\\r\\n\\r\\n' >&3
  body=$(timeout 30 cat <&3 | tail -n 1)
  exec 3<&-
  say "http: $body"
else
  say "http: failed"
fi
if timeout 15 bash -c "exec 3<>/dev/tcp/10.0.2.2/$canary" 2>/dev/null; then
  say "canary: reached"
else
  say "canary: blocked"
fi
for _ in $(seq 180); do [ -c /dev/ttyUSB0 ] && break; sleep 1; done
say "tty: $(stat -c '%n %U:%G %a' /dev/ttyUSB0 2>&1) driver $(basename "$(readlink -f /sys/class/tty/ttyUSB0/device/driver)")"
stty -F /dev/ttyUSB0 9600 raw -echo
exec 4<>/dev/ttyUSB0
printf 'hello from the guest\\n\\x10\\x04\\x01' >&4
if IFS= read -r -t 20 -N 1 reply <&4; then
  say "status: $(printf '%02x' "'$reply")"
else
  say "status: none"
fi
say done
`

const PROOF_UNIT = `[Unit]
Description=Appliance harness proof
Wants=network-online.target
After=network-online.target

[Service]
Type=oneshot
ExecStart=/usr/local/sbin/appliance-proof
StandardOutput=journal+console
StandardError=journal+console

[Install]
WantedBy=multi-user.target
`

const NETWORK = `[Match]
Name=en* eth*

[Network]
DHCP=ipv4
`

/** Builds the proof image in `dir` (about 2-4 minutes: apt-get and the initramfs run under emulation). */
export async function makeProofImage(dir: string, root?: DebianRoot): Promise<ProofImage> {
  const base = root ?? (await debianRoot({ suite: 'bookworm', arch: 'arm64' }))
  const tree = path.join(dir, 'root')
  // cp -a, not fs.cpSync: the root's /dev holds device nodes, which cpSync would read (/dev/zero for ever).
  const copied = await run('cp', ['-a', base.dir, tree])
  if (copied.status !== 0) throw new Error(`copying ${base.dir}: ${copied.output}`)
  chmodSync(tree, 0o755)
  const started = Date.now()
  // /proc, /dev and /sys for the maintainer scripts, the shared .deb cache, all in a mount namespace that
  // ends with the shell; under the root's lock, as debian-root.ts's aptInstall takes it.
  const script = [
    'set -e',
    'R=$1',
    'mount -t proc proc "$R/proc"',
    'mount --bind /dev "$R/dev"',
    'mount --bind /dev/pts "$R/dev/pts"',
    'mount --bind -o ro /sys "$R/sys"',
    'mount --bind "$2" "$R/var/cache/apt/archives"',
    'cp /etc/resolv.conf "$R/etc/resolv.conf"',
    'shift 2',
    'chroot "$R" apt-get install -y --no-install-recommends "$@" || {',
    '  chroot "$R" apt-get update',
    '  chroot "$R" apt-get install -y --no-install-recommends "$@"',
    '}',
    'chroot "$R" systemctl enable systemd-networkd appliance-proof.service',
  ].join('\n')
  writeProofFiles(tree)
  const result = await run('flock', [
    base.lock,
    'unshare',
    '--mount',
    '--propagation',
    'private',
    'sh',
    '-ec',
    script,
    'sh',
    tree,
    base.archives,
    ...PACKAGES,
  ])
  if (result.status !== 0) throw new Error(`installing ${PACKAGES.join(' ')}: ${result.output.slice(-3000)}`)
  const installMs = Date.now() - started
  return { ...(await imageOfTree(tree, dir)), installMs }
}

/** The proof's unit, script, network and host name, written into `tree`. */
export function writeProofFiles(tree: string): void {
  writeFileSync(path.join(tree, 'usr/local/sbin/appliance-proof'), PROOF_SCRIPT, { mode: 0o755 })
  writeFileSync(path.join(tree, 'etc/systemd/system/appliance-proof.service'), PROOF_UNIT)
  mkdirSync(path.join(tree, 'etc/systemd/network'), { recursive: true })
  writeFileSync(path.join(tree, 'etc/systemd/network/80-proof.network'), NETWORK)
  writeFileSync(path.join(tree, 'etc/hostname'), 'appliance-proof\n')
  writeFileSync(path.join(tree, 'etc/fstab'), 'LABEL=RASPIROOT / ext4 rw,relatime 0 1\n')
  // An initramfs of the few modules this machine needs. MODULES=most (Debian's default) has virtio_pci,
  // virtio_blk and ext4 too (926 modules, a 35 MB initrd), but copies them one emulated `cp` at a time: about
  // 10 minutes here, against about 2 for the whole apt-get install with this list (a 6 MB initrd). The list
  // sits under /usr/share: /etc/initramfs-tools/modules is initramfs-tools' conffile.
  mkdirSync(path.join(tree, 'etc/initramfs-tools/conf.d'), { recursive: true })
  writeFileSync(path.join(tree, 'etc/initramfs-tools/conf.d/appliance-proof.conf'), 'MODULES=list\n')
  mkdirSync(path.join(tree, 'usr/share/initramfs-tools/modules.d'), { recursive: true })
  writeFileSync(
    path.join(tree, 'usr/share/initramfs-tools/modules.d/appliance-proof'),
    ['virtio_pci', 'virtio_blk', 'ext4', ''].join('\n'),
  )
}

/** The kernel and initrd copied out of `tree`, then `tree` made into an ext4 image labelled RASPIROOT and removed. */
export async function imageOfTree(tree: string, dir: string): Promise<Omit<ProofImage, 'installMs'>> {
  // What the chroot needed and a booted system must not have.
  rmSync(path.join(tree, 'usr/sbin/policy-rc.d'), { force: true })
  writeFileSync(path.join(tree, 'etc/resolv.conf'), '')
  const boot = path.join(tree, 'boot')
  const kernelName = readdirSync(boot).find((f) => f.startsWith('vmlinuz-'))
  const initrdName = readdirSync(boot).find((f) => f.startsWith('initrd.img-'))
  if (!kernelName || !initrdName)
    throw new Error(`no kernel or initrd in ${boot}: ${readdirSync(boot).join(', ')}`)
  const kernel = path.join(dir, 'vmlinuz')
  const initrd = path.join(dir, 'initrd.img')
  cpSync(path.join(boot, kernelName), kernel)
  cpSync(path.join(boot, initrdName), initrd)
  // Room to write: the tree's size and 256 MiB more (mkfs.ext4 -d does not grow the file system).
  const image = path.join(dir, 'proof.img')
  const du = await run('du', ['-s', '--block-size=1M', tree])
  const sizeMb = Number.parseInt(du.output, 10) + 256
  const made = await run('mkfs.ext4', ['-q', '-F', '-L', 'RASPIROOT', '-d', tree, image, `${sizeMb}M`])
  if (made.status !== 0) throw new Error(`mkfs.ext4: ${made.output}`)
  rmSync(tree, { recursive: true, force: true })
  return { image, kernel, initrd, sizeBytes: sizeMb * 1024 * 1024 }
}

function run(cmd: string, args: string[]): Promise<{ status: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, {
      env: { PATH, LANG: 'C.UTF-8', DEBIAN_FRONTEND: 'noninteractive' },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let output = ''
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk
    })
    child.stderr.on('data', (chunk: Buffer) => {
      output += chunk
    })
    child.once('error', reject)
    child.once('close', (status) => resolve({ status, output }))
  })
}
