import { spawn } from 'node:child_process'

/**
 * Commands run inside the appliance's root as it is built: `chroot` in a mount and PID namespace of their own
 * (unshare(1)), with /proc, /sys, /dev and /dev/pts mounted there. The mounts never reach the host's mount
 * table and end with the namespace. The root's arm64 binaries run through binfmt_misc's qemu-aarch64 entry
 * (qemu-user-static, the F flag: no qemu in the root).
 *
 * Nothing outlives the command, whatever ends it: the namespace's first process is a shell that runs the
 * command and, on SIGTERM, kills every process in the namespace (kill(2) with pid -1 from a namespace's init).
 * It gets SIGTERM when unshare dies (--kill-child), and unshare gets SIGKILL when this process dies (setpriv
 * --pdeathsig). The init could not be sent SIGKILL that way: a namespace's init gets only the signals it has a
 * handler for, SIGKILL from an ancestor namespace's process excepted (pid_namespaces(7)), and a parent-death
 * SIGKILL was seen to be dropped.
 */
export const SYSTEM_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'

export interface ChrootRun {
  /** The root directory. */
  root: string
  argv: readonly string[]
  /** Held (flock(1)) while the command runs: the shared apt archives. */
  lockFile?: string
  /** Bound over the root's /var/cache/apt/archives: the .debs kept between builds. */
  archives?: string
  timeoutMs?: number
}

const NAMESPACE_INIT = [
  'root=$1 archives=$2 lock=$3',
  'shift 3',
  "trap 'kill -KILL -1; exit 143' TERM",
  'mount -t proc proc "$root/proc"',
  'mount -t sysfs -o ro sysfs "$root/sys"',
  'mount --bind /dev "$root/dev"',
  'mount -t devpts -o newinstance,ptmxmode=0666 devpts "$root/dev/pts"',
  '[ -z "$archives" ] || mount --bind "$archives" "$root/var/cache/apt/archives"',
  'if [ -n "$lock" ]; then flock --exclusive "$lock" chroot "$root" "$@" & else chroot "$root" "$@" & fi',
  'wait $!',
].join('\n')

/** Runs a command in the root; rejects with the end of its output when it fails. */
export function inChroot(run: ChrootRun): Promise<string> {
  const argv = [
    'setpriv',
    '--pdeathsig=KILL',
    '--',
    'unshare',
    '--mount',
    '--pid',
    '--fork',
    '--kill-child=TERM',
    '--propagation',
    'private',
    'sh',
    '-ec',
    NAMESPACE_INIT,
    'sh',
    run.root,
    run.archives ?? '',
    run.lockFile ?? '',
    ...run.argv,
  ]
  return new Promise((resolve, reject) => {
    const child = spawn(argv[0]!, argv.slice(1), {
      env: { PATH: SYSTEM_PATH, LANG: 'C.UTF-8', HOME: '/root', DEBIAN_FRONTEND: 'noninteractive' },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let output = ''
    const keep = (chunk: Buffer) => {
      output = (output + chunk.toString('utf8')).slice(-20_000)
    }
    child.stdout.on('data', keep)
    child.stderr.on('data', keep)
    const timer = setTimeout(() => child.kill('SIGKILL'), run.timeoutMs ?? 30 * 60_000)
    child.once('error', reject)
    child.once('close', (status, signal) => {
      clearTimeout(timer)
      if (status === 0) resolve(output)
      else {
        const tail = output.trim().split('\n').slice(-30).join('\n')
        reject(
          new Error(`in the image's root: ${run.argv.join(' ')}: ${signal ?? `exit ${status}`}\n${tail}`),
        )
      }
    })
  })
}
