import { type ChildProcess, execFileSync, spawn } from 'node:child_process'
import { readFileSync, readlinkSync, realpathSync, statSync } from 'node:fs'
import path from 'node:path'
import { ApiClient } from '../e2e/api-client.ts'
import { newTempDir, setUpAccount, startCloudProcess, stopAll } from '../e2e/harness.ts'
import { exitOf, hasExited, ROOT, runCli, waitForLogLine } from '../helpers/cli.ts'
import { available, type BootedRoot, bootRoot, debianRoot } from '../helpers/debian-root.ts'
import { otaBuild } from '../ota/ota-build.ts'
import { commandLine, serviceSettings } from '../ota/systemd-unit.ts'
import { startPrinterSimulator } from '../simulators/printer-simulator.ts'
import { PRODUCTION_HUB_ENV } from './hub-env.ts'
import { childrenOf, printerOnline } from './hub-footprint.ts'
import { median, nowMs } from './stats.ts'

/**
 * The hub's package on arm64 without ARM hardware (issue 25 point 4): `ota build --arch arm64,amd64` of one
 * version, the arm64 .deb installed by apt-get in a Debian 12 arm64 root run by qemu-user-static
 * (test/helpers/debian-root.ts), its hub started with the systemd unit's command line as its user, against
 * a cloud on the host and a socket printer simulator; beside it the amd64 .deb unpacked into a scratch root
 * and its hub run natively (as hub-package.ts does). On each: start-up (spawn → the printer online in the API,
 * reported by the new process) over STARTS restarts, then the hub's idle RSS IDLE_MS later, and a bare
 * `node` (the same carried runtime, with the V8 flags the launcher gave the hub) idle as long.
 *
 * The emulator's memory is not a Pi's: the RSS of a process qemu-user runs holds the guest's pages and qemu's
 * own (its binary, its heap, its threads' arenas and the translation cache of the code it ran), so what is
 * reported is the hub's own share, hub − bare node under the same emulator, beside the same difference on
 * amd64 (goal: no more than there); and that share split into qemu's and the guest's by address (memoryOf).
 * qemu's grows with the code the guest runs (the hub runs much more than a bare node: its translation cache
 * and the hash table of it), and the guest's is itself an upper bound, since not all the memory a guest gives
 * back leaves under qemu (a bare node that fills a V8 heap of 170 MB and collects it keeps 27 MB more guest
 * memory than before, where natively the whole process keeps 16 MB more). So the control: the amd64 package's
 * runtime and hub under the same emulator, qemu-x86_64-static on this x86-64 host, its share split the same
 * way, the guest's compared with arm64's. Start-up under emulation is not a Pi's either: reported only as
 * ratios to amd64 in the same run, native and emulated.
 *
 * About 2 min 30 s-3 min on a 2-core machine shared with other work: ota build 20-35 s, apt-get install
 * 45-75 s (dpkg emulated), the rest about 60 s; debootstrap 80 s more the first time (then cached).
 */
const STARTS = Number(process.env.BENCH_ARM_STARTS ?? 3)
const IDLE_MS = 3000
const VERSION = '0.0.1'
const UNIT = '/lib/systemd/system/print-hub.service'
const SETTINGS = '/etc/default/print-hub'
/** The carried runtime, as the launcher runs it (through the `current` symlink). */
const RUNTIME = 'opt/print-hub/current/runtime/bin/node'
const HUB_SCRIPT = '/lib/hub.mjs'
const X86_64_EMULATOR = '/usr/bin/qemu-x86_64-static'
const IDLE_PROGRAM = 'setInterval(() => {}, 1000)'

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/** Polls `check` every ~5 ms; true when it held, false after `timeoutMs`. */
async function poll(check: () => Promise<boolean>, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs
  while (!(await check())) {
    if (Date.now() > deadline) return false
    await sleep(5)
  }
  return true
}

function cmdlineOf(pid: number): string[] {
  return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').slice(0, -1)
}

/** The process and its descendants, by their parent PIDs in /proc. */
function processTree(pid: number): number[] {
  const tree = [pid]
  for (let i = 0; i < tree.length; i++) tree.push(...childrenOf(tree[i]!))
  return tree
}

/**
 * The host PID of the node process that `child` became: under qemu-user the launcher's `exec` of the
 * runtime keeps the PID (binfmt_misc starts the emulator in it again), so it is `child` itself once setpriv,
 * nsenter, chroot and the launcher have exec'd; checked by its command line (which, under binfmt_misc's P
 * flag, is the interpreter's path, the program's path, then its argv), else looked for among its descendants.
 */
function nodePid(child: ChildProcess, runtime: string, marker: (arg: string) => boolean): number {
  const found = processTree(child.pid!).filter((pid) => {
    try {
      const argv = cmdlineOf(pid)
      return argv.includes(runtime) && argv.some(marker)
    } catch {
      return false // it ended meanwhile
    }
  })
  if (found.length !== 1)
    throw new Error(`${found.length} processes under PID ${child.pid} run ${runtime}: ${found.join(', ')}`)
  return found[0]!
}

/** The V8 flags in a runtime's command line: the options between the runtime and the script (or -e). */
function v8Flags(argv: string[], runtime: string): string[] {
  const from = argv.lastIndexOf(runtime) + 1
  const to = argv.findIndex((arg, i) => i >= from && (!arg.startsWith('-') || arg === '-e'))
  return argv.slice(from, to)
}

interface Memory {
  rssMb: number
  /**
   * Under emulation, the RSS of qemu's own mappings (NaN when the split below did not hold); else 0. The guest's
   * are the rest.
   */
  emulatorMb: number
  /** Of those, qemu's translation cache (the code it generated from the guest's). */
  translationMb: number
  /** Of the process's own (the guest's, under emulation): the pages of files mapped (the runtime, addons, libraries). */
  fileMb: number
  /** Other processes below it (the render worker, if one were started), and their RSS. */
  others: number
  othersMb: number
}

/**
 * Where qemu-user (7.2, a 64-bit guest on a 64-bit host, guest_base 0) keeps the guest apart from itself,
 * as seen in /proc/PID/smaps: the guest's mappings go up from 0x5500000000 (an aarch64 guest) or 0x4000000000
 * (an x86-64 one), after the runtime's own at 0x400000, and V8 hints its heap pages at random below 2^46;
 * qemu's own are above: its heap (the host's brk, after a static-pie binary at 0x5555…; the guest's brk is an
 * mmap of qemu's), its binary, its threads' stacks and malloc arenas, large allocations (the translation
 * blocks' hash table, 2-8 MB) and the translation cache (mmaps down from 0x7f…). V8's code range lands up
 * there too (a hint qemu takes): its JIT code, under 1 MB resident, told apart as the only executable
 * anonymous memory there besides the translation cache, and on x86-64 the embedded builtins V8 maps into it
 * from the runtime's file (short builtin calls), told apart by the file.
 */
const GUEST_LIMIT = 2n ** 46n

/**
 * VmRSS of a process; under qemu-user, also the part of it that is qemu's own rather than the guest's, from
 * /proc/PID/smaps: the mappings above GUEST_LIMIT but V8's, checked to hold the emulator's binary
 * (/proc/PID/exe) and not the carried runtime's ELF load; and, of them, the translation cache: an anonymous
 * rwx mapping of 128 MiB, qemu's default in user mode.
 */
function memoryOf(pid: number, emulated: boolean): Memory {
  const kb = (status: string) => Number(/^VmRSS:\s+(\d+)/m.exec(status)?.[1] ?? Number.NaN)
  const rssMb = kb(readFileSync(`/proc/${pid}/status`, 'utf8')) / 1024
  let emulatorKb = 0
  let translationKb = 0
  let fileKb = 0
  const exe = readlinkSync(`/proc/${pid}/exe`)
  const split = { exeAbove: false, runtimeLoadedBelow: false }
  let own = false
  let cache = false
  let file = false
  for (const line of readFileSync(`/proc/${pid}/smaps`, 'utf8').split('\n')) {
    const mapping = /^([0-9a-f]+)-([0-9a-f]+) (\S+) ([0-9a-f]+) \S+ \d+\s*(.*)$/.exec(line)
    if (mapping) {
      const from = BigInt(`0x${mapping[1]}`)
      const name = mapping[5]!
      const code = name === '' && mapping[3]!.includes('x')
      // The guest's files show by their path on the host (under the booted root's overlay).
      const runtime = /\/opt\/print-hub\/releases\/[^/]+\/runtime\/bin\/node$/.test(name)
      cache = emulated && from >= GUEST_LIMIT && code && BigInt(`0x${mapping[2]}`) - from >= 2n ** 26n
      own = emulated && from >= GUEST_LIMIT && (!code || cache) && !runtime
      file = !own && name.startsWith('/')
      if (name === exe) split.exeAbove = from >= GUEST_LIMIT
      if (runtime && BigInt(`0x${mapping[4]}`) === 0n) split.runtimeLoadedBelow = from < GUEST_LIMIT
      continue
    }
    const rss = /^Rss:\s+(\d+) kB/.exec(line)
    if (rss && own) emulatorKb += Number(rss[1])
    if (rss && cache) translationKb += Number(rss[1])
    if (rss && file) fileKb += Number(rss[1])
  }
  if (emulated && (!split.exeAbove || !split.runtimeLoadedBelow)) emulatorKb = Number.NaN
  const others = processTree(pid).slice(1)
  let othersKb = 0
  for (const other of others) {
    try {
      othersKb += kb(readFileSync(`/proc/${other}/status`, 'utf8'))
    } catch {
      // it ended meanwhile
    }
  }
  return {
    rssMb,
    emulatorMb: emulatorKb / 1024,
    translationMb: translationKb / 1024,
    fileMb: fileKb / 1024,
    others: others.length,
    othersMb: othersKb / 1024,
  }
}

/** Utime + stime of a process, in clock ticks (/proc/PID/stat fields 14 and 15). */
function cpuTicks(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  return Number(fields[11]) + Number(fields[12])
}

/** Until a process that prints nothing has started: its CPU time unchanged for 0.5 s. */
async function settled(child: ChildProcess, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs
  let last = -1
  let still = 0
  while (still < 5) {
    if (hasExited(child)) throw new Error(`exited with ${child.exitCode ?? child.signalCode}`)
    if (Date.now() > deadline) throw new Error(`still busy after ${timeoutMs} ms`)
    await sleep(100)
    const ticks = cpuTicks(child.pid!)
    still = ticks === last ? still + 1 : 0
    last = ticks
  }
}

/** Reads a child's output so that it never blocks on a full pipe; the last lines kept for errors. */
function drain(child: ChildProcess, output: string[]): void {
  const keep = (chunk: Buffer) => {
    output.push(chunk.toString('utf8'))
    if (output.length > 200) output.splice(0, output.length - 200)
  }
  child.stdout?.on('data', keep)
  child.stderr?.on('data', keep)
}

async function stop(child: ChildProcess): Promise<void> {
  if (!hasExited(child)) child.kill('SIGTERM')
  const timer = setTimeout(() => child.kill('SIGKILL'), 60_000)
  await exitOf(child)
  clearTimeout(timer)
}

/** Where a hub runs: emulated in the arm64 root, or from the unpacked amd64 package, natively or emulated. */
interface Platform {
  name: string
  /** The carried runtime's path as its processes' command lines show it. */
  runtime: string
  emulated: boolean
  /** Bound on each start (spawn → the printer online). */
  timeoutMs: number
  hub(): ChildProcess
  bare(flags: string[]): ChildProcess
}

interface Figures {
  onlineMs: number[]
  hub: Memory
  bare: Memory
  hubArgv: string[]
  bareArgv: string[]
  exe: string
}

/**
 * The hub started (it enrols), then stopped and started again STARTS times, each start timed to its printer
 * online; IDLE_MS after the last, its RSS. Then, the hub stopped, a bare node with its V8 flags: its RSS
 * IDLE_MS after it settled.
 */
async function measure(platform: Platform, api: ApiClient): Promise<Figures> {
  const output: string[] = []
  const failed = (what: string, error: unknown) =>
    new Error(`${platform.name}: ${what}: ${(error as Error).message}\n${output.join('').slice(-4000)}`)
  const start = () => {
    const child = platform.hub()
    drain(child, output)
    return child
  }
  let hub = start()
  try {
    await waitForLogLine(hub, (line) => line.msg === 'hub ready', { withinMs: platform.timeoutMs }).catch(
      (error: unknown) => {
        throw failed('the hub did not start', error)
      },
    )
    const printerId = (await api.waitForPrinters(1, platform.timeoutMs))[0]!.printer_id
    const onlineMs: number[] = []
    for (let i = 0; i < STARTS; i++) {
      // Let the hub settle (first health poll, state report) so that the stop does not race its start.
      await sleep(500)
      await stop(hub)
      await poll(async () => !(await printerOnline(api, printerId)), 10_000)
      const spawnedAt = Date.now()
      const t0 = nowMs()
      hub = start()
      if (!(await poll(() => printerOnline(api, printerId, spawnedAt), platform.timeoutMs)))
        throw failed(
          'restart',
          new Error(`the printer was not online ${platform.timeoutMs} ms after the spawn`),
        )
      onlineMs.push(nowMs() - t0)
    }
    await sleep(IDLE_MS)
    const hubPid = nodePid(hub, platform.runtime, (arg) => arg.endsWith(HUB_SCRIPT))
    const hubMemory = memoryOf(hubPid, platform.emulated)
    const hubArgv = cmdlineOf(hubPid)
    const exe = readlinkSync(`/proc/${hubPid}/exe`)
    await stop(hub)

    const bare = platform.bare(v8Flags(hubArgv, platform.runtime))
    drain(bare, output)
    try {
      await settled(bare, platform.timeoutMs).catch((error: unknown) => {
        throw failed('bare node', error)
      })
      await sleep(IDLE_MS)
      const barePid = nodePid(bare, platform.runtime, (arg) => arg === IDLE_PROGRAM)
      return {
        onlineMs,
        hub: hubMemory,
        bare: memoryOf(barePid, platform.emulated),
        hubArgv,
        bareArgv: cmdlineOf(barePid),
        exe,
      }
    } finally {
      bare.kill('SIGKILL')
      await exitOf(bare)
    }
  } finally {
    await stop(hub)
  }
}

export async function benchHubPackageArm64(): Promise<void> {
  const simulator = await startPrinterSimulator({ language: 'escpos', name: 'Bench receipt' })
  const children: ChildProcess[] = []
  let booted: BootedRoot | undefined
  try {
    // The packages: both architectures of one version, in one build.
    const work = await newTempDir('bench-package-arm64-')
    const out = path.join(work, 'out')
    const keys = JSON.parse(runCli('ota/cli.ts', ['keygen', '--out', path.join(work, 'keys')], {}).stdout)
    const t0 = nowMs()
    const build = await otaBuild(VERSION, out, keys.private_key_file, ['arm64', 'amd64'])
    const buildS = (nowMs() - t0) / 1000
    if (build.status !== 0) throw new Error(`ota build failed: ${build.stderr}`)
    const installers = (
      JSON.parse(build.stdout) as {
        installers: { filename: string; architecture: string; size_bytes: number }[]
      }
    ).installers
    const mb = (n: number) => `${n.toFixed(1)} MB`
    const ms = (n: number) => `${n.toFixed(0)} ms`
    const sizes = (arch: string) => {
      const deb = installers.find((i) => i.architecture === arch && i.filename.endsWith('.deb'))!
      const tarball = installers.find((i) => i.architecture === arch && i.filename.endsWith('.tar.gz'))!
      const file = path.join(out, deb.filename)
      const installedKb = Number(
        execFileSync('dpkg-deb', ['--field', file, 'Installed-Size'], { encoding: 'utf8' }).trim(),
      )
      const scratch = path.join(work, arch)
      execFileSync('dpkg-deb', ['-x', file, scratch])
      const runtimeMb = statSync(path.join(scratch, RUNTIME)).size / 1e6
      return {
        file,
        scratch,
        line: `.deb ${mb(deb.size_bytes / 1e6)}, tarball ${mb(tarball.size_bytes / 1e6)}, installed ${mb((installedKb * 1024) / 1e6)} (runtime ${mb(runtimeMb)})`,
      }
    }
    const arm64 = sizes('arm64')
    const amd64 = sizes('amd64')
    const qemu = /version (\S+)/.exec(
      execFileSync('qemu-aarch64-static', ['--version'], { encoding: 'utf8' }).split('\n')[0] ?? '',
    )?.[1]
    console.log(
      `hub package on arm64 under emulation (ota build ${VERSION} --arch arm64,amd64; Debian 12 arm64 root, qemu-user-static ${qemu ?? '?'} through binfmt_misc)`,
    )
    console.log(`  package arm64: ${arm64.line}; amd64: ${amd64.line}; ota build ${buildS.toFixed(1)} s`)
    const support = available('arm64')
    if (!support.ok) {
      console.log(`  skipped: no emulated arm64 root here (${support.reason})`)
      return
    }

    const cloud = await startCloudProcess()

    // arm64: the .deb installed by apt-get in a booted root, its hub run as the unit runs it.
    let t1 = nowMs()
    const root = await debianRoot({ suite: 'bookworm', arch: 'arm64' })
    const rootS = (nowMs() - t1) / 1000
    booted = await bootRoot(root)
    const emulatedRoot = booted
    emulatedRoot.writeFile(`/tmp/${path.basename(arm64.file)}`, readFileSync(arm64.file))
    t1 = nowMs()
    await emulatedRoot.aptInstall([`/tmp/${path.basename(arm64.file)}`])
    const aptS = (nowMs() - t1) / 1000
    const armAccount = await setUpAccount(cloud, 'Bench arm64 shop')
    const settings: Record<string, string> = {
      PRINT_HUB_CLOUD: cloud.url,
      PRINT_HUB_OPTIONS: `--enroll ${armAccount.enrollmentToken} --printer ${simulator.uri}`,
      ...PRODUCTION_HUB_ENV,
    }
    emulatedRoot.writeFile(
      SETTINGS,
      `${Object.entries(settings)
        .map(([key, value]) => `${key}=${value}`)
        .join('\n')}\n`,
    )
    const service = serviceSettings(emulatedRoot.readFile(UNIT).toString('utf8'))
    const unitEnv: Record<string, string> = {
      ...Object.fromEntries(
        (service.get('Environment') ?? []).map((e) => e.split('=', 2) as [string, string]),
      ),
      ...settings,
    }
    const user = service.get('User')![0]!
    const group = service.get('Group')![0]!
    const as = {
      user,
      group,
      groups: [group, ...service.get('SupplementaryGroups')![0]!.split(' ')],
      env: { ...unitEnv, USER: user, LOGNAME: user },
      cwd: service.get('WorkingDirectory')![0]!,
    }
    const argv = commandLine(service.get('ExecStart')![0]!, unitEnv)
    const emulated = await measure(
      {
        name: 'arm64 (emulated)',
        runtime: `/${RUNTIME}`,
        emulated: true,
        timeoutMs: 120_000,
        hub: () => emulatedRoot.spawn(argv[0]!, argv.slice(1), as),
        bare: (flags) => emulatedRoot.spawn(`/${RUNTIME}`, [...flags, '-e', IDLE_PROGRAM], as),
      },
      new ApiClient(cloud.url, armAccount.accessToken),
    )
    await booted.close()
    booted = undefined

    // amd64: the unpacked .deb, its launcher run natively with the same arguments.
    const hubArgs = async (shop: string) => {
      const account = await setUpAccount(cloud, shop)
      const dataDir = await newTempDir('bench-package-amd64-data-')
      const args = ['run', '--cloud', cloud.url, '--data', dataDir, '--enroll', account.enrollmentToken]
      return { account, dataDir, args: [...args, '--printer', simulator.uri] }
    }
    const amdHub = await hubArgs('Bench amd64 shop')
    const env: NodeJS.ProcessEnv = {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      LANG: 'C.UTF-8',
      LOG_FORMAT: 'json',
      ...PRODUCTION_HUB_ENV,
    }
    // The launcher runs the runtime by its path from `readlink -f "$0"`.
    const amdRuntime = path.join(realpathSync(amd64.scratch), RUNTIME)
    const native = await measure(
      {
        name: 'amd64',
        runtime: amdRuntime,
        emulated: false,
        timeoutMs: 20_000,
        hub: () => {
          const child = spawn(path.join(amd64.scratch, 'opt/print-hub/bin/print-hub'), amdHub.args, {
            cwd: amdHub.dataDir,
            env,
            stdio: ['ignore', 'pipe', 'pipe'],
          })
          children.push(child)
          return child
        },
        bare: (flags) => {
          const child = spawn(amdRuntime, [...flags, '-e', IDLE_PROGRAM], {
            cwd: amdHub.dataDir,
            env,
            stdio: ['ignore', 'pipe', 'pipe'],
          })
          children.push(child)
          return child
        },
      },
      new ApiClient(cloud.url, amdHub.account.accessToken),
    )

    // The control: the same amd64 runtime and hub under qemu-user too (qemu-x86_64-static on this x86-64
    // host), run as the launcher runs it, with the V8 flags it gave the native hub.
    const emulatedHub = await hubArgs('Bench amd64 emulated shop')
    const installRoot = path.join(realpathSync(amd64.scratch), 'opt/print-hub')
    const emulatedEnv = { ...env, PRINT_HUB_INSTALL_ROOT: installRoot }
    const emulatedAmd = await measure(
      {
        name: 'amd64 (emulated)',
        runtime: amdRuntime,
        emulated: true,
        timeoutMs: 120_000,
        hub: () => {
          const script = path.join(installRoot, 'current', HUB_SCRIPT)
          const args = [amdRuntime, ...v8Flags(native.hubArgv, amdRuntime), script, ...emulatedHub.args]
          const child = spawn(X86_64_EMULATOR, args, {
            cwd: emulatedHub.dataDir,
            env: emulatedEnv,
            stdio: ['ignore', 'pipe', 'pipe'],
          })
          children.push(child)
          return child
        },
        bare: (flags) => {
          const child = spawn(X86_64_EMULATOR, [amdRuntime, ...flags, '-e', IDLE_PROGRAM], {
            cwd: emulatedHub.dataDir,
            env: emulatedEnv,
            stdio: ['ignore', 'pipe', 'pipe'],
          })
          children.push(child)
          return child
        },
      },
      new ApiClient(cloud.url, emulatedHub.account.accessToken),
    )

    const share = (f: Figures) => f.hub.rssMb - f.bare.rssMb
    const others = (m: Memory) =>
      m.others > 0 ? ` (+ ${mb(m.othersMb)} in ${m.others} child processes)` : ''
    const guestShare = (f: Figures) => share(f) - (f.hub.emulatorMb - f.bare.emulatorMb)
    const fileShare = (f: Figures) => f.hub.fileMb - f.bare.fileMb
    const emulatedLine = (name: string, f: Figures) =>
      `  idle RSS after ${IDLE_MS / 1000} s, ${name} emulated: hub ${mb(f.hub.rssMb)}${others(f.hub)}, bare node ${mb(f.bare.rssMb)}; hub's own share ${mb(share(f))}: qemu's ${mb(share(f) - guestShare(f))} (its own mappings ${mb(f.hub.emulatorMb)} vs ${mb(f.bare.emulatorMb)}, translation cache ${mb(f.hub.translationMb)} vs ${mb(f.bare.translationMb)}), the guest's ${mb(guestShare(f))} (${mb(fileShare(f))} of it pages of files, ${mb(guestShare(f) - fileShare(f))} anonymous)`
    const armShare = share(emulated)
    const amdShare = share(native)
    const armGuest = guestShare(emulated)
    const amdGuest = guestShare(emulatedAmd)
    const armOnline = median(emulated.onlineMs)
    const amdOnline = median(native.onlineMs)
    const amdEmulatedOnline = median(emulatedAmd.onlineMs)
    // The runtime, its flags and the script (the hub's own arguments left out).
    const shown = (args: string[], runtime: string) => {
      const from = args.lastIndexOf(runtime)
      const script = args.findIndex((a, i) => i > from && (a.endsWith(HUB_SCRIPT) || a === IDLE_PROGRAM))
      return args
        .slice(from, script + 1)
        .map((a) => (a === IDLE_PROGRAM ? JSON.stringify(a) : a))
        .join(' ')
        .concat(args[script] === IDLE_PROGRAM ? '' : ' run …')
    }
    const lines = [
      `  emulated: ${emulated.exe} runs the hub (${shown(emulated.hubArgv, `/${RUNTIME}`)}) and the bare node (${shown(emulated.bareArgv, `/${RUNTIME}`)}), as ${user}; Debian root ${root.builtMs === null ? `cached (${rootS.toFixed(1)} s)` : `debootstrap ${(root.builtMs / 1000).toFixed(1)} s`}, apt-get install ${aptS.toFixed(1)} s`,
      `  emulated amd64 (the control): ${emulatedAmd.exe} runs the hub (${shown(emulatedAmd.hubArgv, amdRuntime)}) and the bare node (${shown(emulatedAmd.bareArgv, amdRuntime)})`,
      emulatedLine('arm64', emulated),
      `  idle RSS after ${IDLE_MS / 1000} s, amd64 native: hub ${mb(native.hub.rssMb)}${others(native.hub)}, bare node ${mb(native.bare.rssMb)}; hub's own share ${mb(amdShare)} (${mb(fileShare(native))} of it pages of files, ${mb(amdShare - fileShare(native))} anonymous)`,
      emulatedLine('amd64', emulatedAmd),
      `  hub's own share (hub − bare node): arm64 ${mb(armShare)} under emulation, ${mb(armGuest)} of it the guest's, vs amd64 ${mb(amdShare)} (goal: no more than on amd64); ratio ${(armShare / amdShare).toFixed(2)}, the guest's ${(armGuest / amdShare).toFixed(2)}`,
      `  hub's own share, the guest's, under the same emulator: arm64 ${mb(armGuest)} vs amd64 ${mb(amdGuest)} (goal: arm64 no more than amd64); ratio ${(armGuest / amdGuest).toFixed(2)}`,
      `  start-up to printer online (median of ${STARTS}): arm64 emulated / amd64 ${(armOnline / amdOnline).toFixed(1)}× (emulation ${ms(armOnline)}, not a Pi's; amd64 ${ms(amdOnline)}); arm64 emulated / amd64 emulated ${(armOnline / amdEmulatedOnline).toFixed(1)}× (amd64 emulated ${ms(amdEmulatedOnline)})`,
    ]
    for (const line of lines) console.log(line)
  } finally {
    for (const child of children) if (!hasExited(child)) child.kill('SIGKILL')
    await Promise.all(children.map((child) => exitOf(child)))
    await booted?.close()
    await stopAll()
    await simulator.close()
  }
}

// Run alone: `npx tsx test/bench/hub-package-arm64.ts`.
if (process.argv[1] && path.resolve(process.argv[1]) === path.join(ROOT, 'test/bench/hub-package-arm64.ts'))
  await benchHubPackageArm64()
