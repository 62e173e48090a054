import { type ChildProcess, spawn, spawnSync } from 'node:child_process'
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { type Architecture, architectureNamed } from '../../ota/architectures.ts'
import { cacheDir } from '../../ota/runtime.ts'

/**
 * Debian roots for tests that install and run the hub's package on another architecture without that
 * hardware: a minbase root made once by debootstrap and kept in the OTA cache (OTA_CACHE_DIR, else
 * ~/.cache/print-hub-ota) under roots/SUITE-ARCH, the .debs it and apt download kept beside it in
 * debs/SUITE-ARCH; each test boots a throwaway overlay of it and runs commands inside with chroot, foreign
 * binaries executed by qemu-user-static through binfmt_misc (the F flag: no qemu inside the root).
 *
 * Every mount of a booted root lives in a mount namespace of its own, held by one process: the host's mount
 * table never sees them, and they vanish with that namespace when close() ends its processes, or when this
 * process dies (the holder reads its stdin to EOF; what runs inside gets SIGKILL when its parent dies).
 */
export type DebianArch = Architecture

export interface DebianRootOptions {
  suite: string
  arch: DebianArch
  mirror?: string
  /** Default: the OTA cache (ota/runtime.ts cacheDir()). */
  cache?: string
}

export interface DebianRoot {
  suite: string
  arch: DebianArch
  /** The cached root; never written to once made. */
  dir: string
  /** The .debs debootstrap and apt downloaded; bound over each booted root's /var/cache/apt/archives. */
  archives: string
  /** Held while the root is made and while apt runs in a booted root (they share `archives`). */
  lock: string
  /** How long debootstrap took, when this call made the root; null when it came from the cache. */
  builtMs: number | null
}

export interface RunOptions {
  /** Run as this user of the root (its uid, gid and HOME from the root's /etc/passwd); default root. */
  user?: string
  /** Its group, by name (default: the user's own in /etc/passwd). */
  group?: string
  /** The user's supplementary groups, by name; default those /etc/group gives it (initgroups). */
  groups?: string[]
  /** Added to PATH, HOME and LANG; nothing of this process's environment is passed on. */
  env?: Record<string, string>
  cwd?: string
  input?: string | Buffer
  /** Reject when the command does not exit 0 (default true). */
  check?: boolean
  timeoutMs?: number
}

export interface RunResult {
  status: number | null
  signal: NodeJS.Signals | null
  stdout: string
  stderr: string
}

export interface BootedRoot {
  root: DebianRoot
  /** The overlay's mount point, inside the root's namespace (the host sees an empty directory there). */
  dir: string
  /** How long the namespace and its mounts took to set up. */
  bootMs: number
  /** Where the host reaches a path of the booted root (through the holder's /proc/PID/root). */
  hostPath(inside: string): string
  writeFile(inside: string, data: string | Buffer, mode?: number): void
  readFile(inside: string): Buffer
  run(cmd: string, args?: string[], options?: RunOptions): Promise<RunResult>
  /** A long-running command; close() kills it if it is still running. */
  spawn(
    cmd: string,
    args?: string[],
    options?: Omit<RunOptions, 'input' | 'check' | 'timeoutMs'>,
  ): ChildProcess
  /**
   * `apt-get install -y ARGS`, holding the archives' lock; when a download 404s (the cached root's package
   * lists older than the mirror's), `apt-get update` and once more.
   */
  aptInstall(args: string[], options?: { timeoutMs?: number }): Promise<RunResult>
  /** PIDs of the processes running in the root's mount namespace (the holder excluded). */
  processes(): number[]
  /** Kills every process in the namespace, unmounts everything and deletes the overlay's files. */
  close(): Promise<void>
}

const MIRROR = 'http://deb.debian.org/debian'
const SYSTEM_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'
/** Debian's name of an architecture → the binfmt_misc entry that runs it (qemu-user-static's). */
const BINFMT: Record<DebianArch, string> = { amd64: 'qemu-x86_64', arm64: 'qemu-aarch64', armhf: 'qemu-arm' }
const BINFMT_DIR = '/proc/sys/fs/binfmt_misc'
const HOST_TOOLS = [
  'debootstrap',
  'unshare',
  'nsenter',
  'setpriv',
  'chroot',
  'mount',
  'umount',
  'flock',
  'sh',
]

function which(tool: string): string | null {
  for (const dir of SYSTEM_PATH.split(':')) {
    const file = path.join(dir, tool)
    if (existsSync(file)) return file
  }
  return null
}

function tool(name: string): string {
  const file = which(name)
  if (!file) throw new Error(`${name} is not installed`)
  return file
}

/**
 * Whether this machine can make and run a root of `arch`: root, the host tools, and (for a foreign
 * architecture) qemu-user-static registered with binfmt_misc with the F flag. Mounts binfmt_misc and
 * registers qemu-user-static's entry when they are missing, as a fresh CI machine needs.
 */
export function available(arch: DebianArch): { ok: true } | { ok: false; reason: string } {
  if (process.platform !== 'linux') return { ok: false, reason: 'needs Linux' }
  if (process.getuid?.() !== 0) return { ok: false, reason: 'needs root (debootstrap, mounts, chroot)' }
  for (const name of HOST_TOOLS) if (!which(name)) return { ok: false, reason: `${name} is not installed` }
  if (architectureNamed(process.arch) === arch) return { ok: true }
  const entry = BINFMT[arch]
  const conf = `/usr/lib/binfmt.d/${entry}.conf`
  if (!existsSync(conf) || !which(`${entry}-static`))
    return { ok: false, reason: `qemu-user-static is not installed (no ${conf})` }
  try {
    if (!existsSync(path.join(BINFMT_DIR, 'register'))) {
      const mounted = runSync(tool('mount'), ['-t', 'binfmt_misc', 'binfmt_misc', BINFMT_DIR])
      if (mounted) return { ok: false, reason: `cannot mount binfmt_misc: ${mounted}` }
    }
    if (readFileSync(path.join(BINFMT_DIR, 'status'), 'utf8').trim() !== 'enabled')
      return { ok: false, reason: 'binfmt_misc is disabled' }
    if (!existsSync(path.join(BINFMT_DIR, entry)))
      writeFileSync(path.join(BINFMT_DIR, 'register'), readFileSync(conf, 'utf8').trim())
    const state = readFileSync(path.join(BINFMT_DIR, entry), 'utf8')
    if (!state.startsWith('enabled\n')) return { ok: false, reason: `binfmt_misc entry ${entry} is disabled` }
    if (!/^flags: .*F/m.test(state))
      return {
        ok: false,
        reason: `binfmt_misc entry ${entry} lacks the F flag (qemu would be needed in the root)`,
      }
  } catch (error) {
    return { ok: false, reason: `cannot register ${entry} with binfmt_misc: ${(error as Error).message}` }
  }
  return { ok: true }
}

function runSync(cmd: string, args: string[]): string | null {
  const result = spawnSync(cmd, args, { encoding: 'utf8' })
  return result.status === 0
    ? null
    : (result.stderr || result.error?.message || `exit ${result.status}`).trim()
}

/** A process to completion, its output collected; SIGKILL after `timeoutMs`. */
function exec(
  cmd: string,
  args: string[],
  options: { env?: NodeJS.ProcessEnv; input?: string | Buffer; timeoutMs?: number } = {},
): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, {
      env: options.env ?? { PATH: SYSTEM_PATH },
      stdio: [options.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
    })
    const stdout: Buffer[] = []
    const stderr: Buffer[] = []
    child.stdout?.on('data', (chunk: Buffer) => stdout.push(chunk))
    child.stderr?.on('data', (chunk: Buffer) => stderr.push(chunk))
    if (options.input !== undefined) child.stdin?.end(options.input)
    const timer = options.timeoutMs ? setTimeout(() => child.kill('SIGKILL'), options.timeoutMs) : undefined
    child.once('error', reject)
    child.once('close', (status, signal) => {
      clearTimeout(timer)
      resolve({
        status,
        signal,
        stdout: Buffer.concat(stdout).toString('utf8'),
        stderr: Buffer.concat(stderr).toString('utf8'),
      })
    })
  })
}

function failure(what: string, result: RunResult): Error {
  const output = `${result.stdout}\n${result.stderr}`.trim().split('\n').slice(-30).join('\n')
  return new Error(`${what}: ${result.signal ?? `exit ${result.status}`}\n${output}`)
}

/**
 * `cmd ARGS sh -c ...`: a shell that says when it runs, then waits for its stdin to close. What `cmd` gives
 * it, the lock (flock) or the mount namespace (unshare), lasts until `release()`, or until this process dies.
 */
async function holder(cmd: string, args: string[]): Promise<{ pid: number; release(): Promise<void> }> {
  const child = spawn(cmd, [...args, tool('sh'), '-c', 'echo ready && exec cat >/dev/null'], {
    env: { PATH: SYSTEM_PATH },
    stdio: ['pipe', 'pipe', 'pipe'],
  })
  let stderr = ''
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk
  })
  await new Promise<void>((resolve, reject) => {
    child.stdout.once('data', () => resolve())
    child.once('error', reject)
    child.once('exit', (code) => reject(new Error(`${cmd} ${args.join(' ')} exited with ${code}: ${stderr}`)))
  })
  return {
    pid: child.pid!,
    async release() {
      if (child.exitCode !== null || child.signalCode !== null) return
      const exited = new Promise((resolve) => child.once('exit', resolve))
      child.stdin.end()
      const timer = setTimeout(() => child.kill('SIGKILL'), 5_000)
      await exited
      clearTimeout(timer)
    },
  }
}

async function withLock<T>(file: string, work: () => Promise<T>): Promise<T> {
  const lock = await holder(tool('flock'), ['--exclusive', file])
  try {
    return await work()
  } finally {
    await lock.release()
  }
}

/**
 * The cached minbase root of `suite` for `arch`, made by debootstrap when missing (about a minute under
 * emulation, the .debs downloaded once): made in a temp dir beside it and renamed into place complete.
 */
export async function debianRoot(options: DebianRootOptions): Promise<DebianRoot> {
  const cache = options.cache ?? cacheDir()
  const name = `${options.suite}-${options.arch}`
  const roots = path.join(cache, 'roots')
  const dir = path.join(roots, name)
  const archives = path.join(cache, 'debs', name)
  const lock = path.join(cache, 'debs', `${name}.lock`)
  mkdirSync(roots, { recursive: true })
  mkdirSync(archives, { recursive: true })
  const root = {
    suite: options.suite,
    arch: options.arch,
    dir,
    archives,
    lock,
    builtMs: null as number | null,
  }
  if (existsSync(dir)) return root
  return withLock(lock, async () => {
    if (existsSync(dir)) return root
    // Left by a build that was killed: its namespace, and so its mounts, ended with it.
    for (const entry of readdirSync(roots))
      if (entry.startsWith(`.${name}-`)) rmSync(path.join(roots, entry), { recursive: true, force: true })
    const work = mkdtempSync(path.join(roots, `.${name}-`))
    try {
      chmodSync(work, 0o755)
      const started = Date.now()
      // The second stage's binaries run through binfmt_misc; its /proc and /sys mounts stay in a namespace.
      const result = await exec(
        tool('unshare'),
        [
          '--mount',
          '--propagation',
          'private',
          tool('debootstrap'),
          `--arch=${options.arch}`,
          '--variant=minbase',
          `--cache-dir=${archives}`,
          options.suite,
          work,
          options.mirror ?? MIRROR,
        ],
        { timeoutMs: 30 * 60_000 },
      )
      if (result.status !== 0) {
        const log = path.join(work, 'debootstrap/debootstrap.log')
        if (existsSync(log)) result.stderr += `\n${readFileSync(log, 'utf8')}`
        throw failure(`debootstrap ${name}`, result)
      }
      root.builtMs = Date.now() - started
      // Copies of what debs/ holds.
      const copies = path.join(work, 'var/cache/apt/archives')
      for (const entry of readdirSync(copies)) if (entry.endsWith('.deb')) rmSync(path.join(copies, entry))
      const conf = path.join(work, 'etc/apt/apt.conf.d')
      rmSync(path.join(conf, 'docker-clean'), { force: true })
      writeFileSync(
        path.join(conf, '00test-root'),
        [
          // The archives are a cache shared between runs: nothing deletes what apt downloaded.
          'APT::Keep-Downloaded-Packages "true";',
          'Binary::apt::APT::Keep-Downloaded-Packages "true";',
          'Acquire::Languages "none";',
          'Acquire::Retries "3";',
          '',
        ].join('\n'),
      )
      writeFileSync(path.join(work, 'etc/hosts'), '127.0.0.1\tlocalhost\n::1\t\tlocalhost ip6-localhost\n')
      // No service is started by a maintainer script in a chroot (invoke-rc.d's convention).
      writeFileSync(path.join(work, 'usr/sbin/policy-rc.d'), '#!/bin/sh\nexit 101\n', { mode: 0o755 })
      renameSync(work, dir)
    } finally {
      rmSync(work, { recursive: true, force: true })
    }
    return root
  })
}

function passwdEntry(etc: string, user: string): { uid: number; gid: number; home: string } {
  for (const line of readFileSync(path.join(etc, 'passwd'), 'utf8').split('\n')) {
    const fields = line.split(':')
    if (fields[0] === user) return { uid: Number(fields[2]), gid: Number(fields[3]), home: fields[5] ?? '/' }
  }
  throw new Error(`no user ${user} in the root`)
}

function groupId(etc: string, group: string): number {
  for (const line of readFileSync(path.join(etc, 'group'), 'utf8').split('\n')) {
    const fields = line.split(':')
    if (fields[0] === group) return Number(fields[2])
  }
  throw new Error(`no group ${group} in the root`)
}

function mountNamespace(pid: number | 'self'): string | null {
  try {
    return readlinkSync(`/proc/${pid}/ns/mnt`)
  } catch {
    return null
  }
}

/**
 * A writable view of `root` for one test: an overlay (its upper layer in a temp dir) with /proc, /dev,
 * /dev/pts, /dev/shm and /sys, the shared apt archives, and the host's resolv.conf, in a mount namespace of
 * its own. close() it in afterAll.
 */
export async function bootRoot(root: DebianRoot): Promise<BootedRoot> {
  const started = Date.now()
  const temp = mkdtempSync(path.join(tmpdir(), `debian-root-${root.arch}-`))
  const [upper, work, merged] = ['upper', 'work', 'merged'].map((d) => path.join(temp, d)) as [
    string,
    string,
    string,
  ]
  for (const d of [upper, work, merged]) mkdirSync(d)
  chmodSync(temp, 0o755)
  const namespace = await holder(tool('unshare'), ['--mount', '--propagation', 'private'])
  const children: ChildProcess[] = []
  let closed = false
  const ns = mountNamespace(namespace.pid)
  const hostPath = (inside: string) => path.join(`/proc/${namespace.pid}/root`, merged, inside)
  const enter = [tool('nsenter'), `--target=${namespace.pid}`, '--mount', '--']

  const processes = () => {
    const pids: number[] = []
    for (const entry of readdirSync('/proc')) {
      const pid = Number(entry)
      if (Number.isInteger(pid) && pid !== namespace.pid && mountNamespace(pid) === ns) pids.push(pid)
    }
    return pids
  }

  const close = async () => {
    if (closed) return
    closed = true
    for (const child of children)
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
    for (let attempt = 0; attempt < 50; attempt++) {
      const pids = processes()
      if (pids.length === 0) break
      for (const pid of pids) {
        try {
          process.kill(pid, 'SIGKILL')
        } catch {
          // already gone
        }
      }
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
    const left = processes()
    // The namespace ends with its last process, and its mounts with it; unmounted first all the same, so
    // that a process that would not die cannot keep the overlay's files.
    let unmount = await exec(enter[0]!, [...enter.slice(1), tool('umount'), '--recursive', merged])
    if (unmount.status !== 0)
      unmount = await exec(enter[0]!, [...enter.slice(1), tool('umount'), '--recursive', '--lazy', merged])
    await namespace.release()
    rmSync(temp, { recursive: true, force: true })
    if (left.length > 0) throw new Error(`processes ${left.join(', ')} in the root would not die`)
    if (unmount.status !== 0) throw failure('umount', unmount)
  }

  try {
    if (!ns || ns === mountNamespace('self')) throw new Error('unshare did not make a mount namespace')
    const mounted = await exec(enter[0]!, [
      ...enter.slice(1),
      tool('sh'),
      '-ec',
      [
        'mount -t overlay overlay -o "lowerdir=$1,upperdir=$2,workdir=$3" "$4"',
        'mount -t proc proc "$4/proc"',
        'mount --bind /dev "$4/dev"',
        'mount --bind /dev/pts "$4/dev/pts"',
        'mount -t tmpfs -o mode=1777,nosuid,nodev tmpfs "$4/dev/shm"',
        'mount --bind -o ro /sys "$4/sys"',
        'mount --bind "$5" "$4/var/cache/apt/archives"',
      ].join('\n'),
      'sh',
      root.dir,
      upper,
      work,
      merged,
      root.archives,
    ])
    if (mounted.status !== 0) throw failure('mounting the root', mounted)
    writeFileSync(hostPath('etc/resolv.conf'), readFileSync('/etc/resolv.conf'))
  } catch (error) {
    await close().catch(() => {})
    throw error
  }

  const command = (cmd: string, args: string[], options: RunOptions) => {
    let inner = [cmd, ...args]
    if (options.cwd) inner = ['/usr/bin/env', `--chdir=${options.cwd}`, ...inner]
    let home = '/root'
    if (options.user) {
      const user = passwdEntry(hostPath('etc'), options.user)
      home = user.home
      // setpriv, inside the root, sets the parent-death signal after the change of user (which clears it).
      inner = [
        '/usr/bin/setpriv',
        `--reuid=${user.uid}`,
        `--regid=${options.group ? groupId(hostPath('etc'), options.group) : user.gid}`,
        options.groups ? `--groups=${options.groups.join(',') || '-'}` : '--init-groups',
        '--pdeathsig=KILL',
        '--',
        ...inner,
      ]
    }
    const env = { PATH: SYSTEM_PATH, HOME: home, LANG: 'C.UTF-8', ...options.env }
    const argv = [tool('setpriv'), '--pdeathsig=KILL', '--', ...enter, tool('chroot'), merged, ...inner]
    return { argv, env }
  }

  const run = async (cmd: string, args: string[] = [], options: RunOptions = {}) => {
    if (closed) throw new Error('the root is closed')
    const { argv, env } = command(cmd, args, options)
    const result = await exec(argv[0]!, argv.slice(1), {
      env,
      ...(options.input !== undefined && { input: options.input }),
      ...(options.timeoutMs !== undefined && { timeoutMs: options.timeoutMs }),
    })
    if ((options.check ?? true) && result.status !== 0) throw failure(`${cmd} ${args.join(' ')}`, result)
    return result
  }

  return {
    root,
    dir: merged,
    bootMs: Date.now() - started,
    hostPath,
    writeFile(inside, data, mode = 0o644) {
      writeFileSync(hostPath(inside), data, { mode })
      chmodSync(hostPath(inside), mode)
    },
    readFile: (inside) => readFileSync(hostPath(inside)),
    run,
    spawn(cmd, args = [], options = {}) {
      if (closed) throw new Error('the root is closed')
      const { argv, env } = command(cmd, args, options)
      const child = spawn(argv[0]!, argv.slice(1), { env, stdio: ['ignore', 'pipe', 'pipe'] })
      children.push(child)
      return child
    },
    aptInstall(args, options = {}) {
      const apt = (sub: string[]) =>
        run('apt-get', sub, {
          env: { DEBIAN_FRONTEND: 'noninteractive' },
          check: false,
          timeoutMs: options.timeoutMs ?? 15 * 60_000,
        })
      return withLock(root.lock, async () => {
        let result = await apt(['install', '-y', ...args])
        if (result.status !== 0 && /\b404\s+Not Found/.test(result.stdout + result.stderr)) {
          const update = await apt(['update'])
          if (update.status !== 0) throw failure('apt-get update', update)
          result = await apt(['install', '-y', ...args])
        }
        if (result.status !== 0) throw failure(`apt-get install ${args.join(' ')}`, result)
        return result
      })
    },
    processes,
    close,
  }
}
