import { spawn } from 'node:child_process'
import { readdirSync, readFileSync } from 'node:fs'
import type { ApiClient } from '../e2e/api-client.ts'
import { type HubProcess, startHubProcess } from '../e2e/harness.ts'
import { exitOf, ROOT, waitForLogLine } from '../helpers/cli.ts'
import { median, nowMs } from './stats.ts'

/**
 * The hub's footprint: resident memory of its process while idle, and how long `hub run` takes to start.
 */
export interface HubMemory {
  pid: number
  cmdline: string
  /** Other processes started by the hub (none expected: tsx runs the hub in the same node process). */
  children: number[]
  threads: number
  rssMb: number
  peakRssMb: number
  /** VmRSS of those children together (0 when there are none). */
  childrenRssMb: number
}

/** A number from /proc/<pid>/status (`VmRSS:  51234 kB` → 51234). */
function statusField(status: string, field: string): number {
  const match = new RegExp(`^${field}:\\s+(\\d+)`, 'm').exec(status)
  if (!match) throw new Error(`no ${field} in /proc status`)
  return Number(match[1])
}

/** RSS in MB of any process, from /proc/<pid>/status. */
export function rssOf(pid: number): number {
  return statusField(readFileSync(`/proc/${pid}/status`, 'utf8'), 'VmRSS') / 1024
}

/** Processes whose parent is `pid` (from /proc/<n>/stat, field 4). */
export function childrenOf(pid: number): number[] {
  const children: number[] = []
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8')
      // `pid (comm) state ppid ...`; comm may hold spaces and parentheses, so split after the last ')'.
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1])
      if (ppid === pid) children.push(Number(entry))
    } catch {
      // the process ended meanwhile
    }
  }
  return children
}

/** VmRSS of the hub's process, after checking that this pid is the node process that runs hub/cli.ts. */
export function hubMemory(hub: HubProcess): HubMemory {
  const pid = hub.process.pid
  if (pid === undefined) throw new Error('hub process has no pid')
  const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean).join(' ')
  if (!cmdline.includes('hub/cli.ts') || !cmdline.includes('run'))
    throw new Error(`pid ${pid} is not the hub: ${cmdline}`)
  const children = childrenOf(pid)
  const status = readFileSync(`/proc/${pid}/status`, 'utf8')
  return {
    pid,
    cmdline,
    children,
    threads: statusField(status, 'Threads'),
    rssMb: statusField(status, 'VmRSS') / 1024,
    peakRssMb: statusField(status, 'VmHWM') / 1024,
    childrenRssMb: children.reduce((sum, child) => {
      try {
        return sum + rssOf(child)
      } catch {
        return sum // it ended meanwhile
      }
    }, 0),
  }
}

/** Polls `check` every ~5 ms; resolves true when it held, false after `timeoutMs`. */
async function until(check: () => Promise<boolean>, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs
  while (!(await check())) {
    if (Date.now() > deadline) return false
    await new Promise((r) => setTimeout(r, 5))
  }
  return true
}

/** Whether the printer is online in the API with a report newer than `sinceWallMs` (0: any). */
export const printerOnline = async (api: ApiClient, printerId: string, sinceWallMs = 0) =>
  (await api.printers()).some(
    (p) =>
      p.printer_id === printerId &&
      p.online &&
      Date.parse(p.last_seen_at ?? '1970-01-01T00:00:00Z') >= sinceWallMs,
  )

export interface StartUp {
  /** spawn of `hub run` → its `hub ready` log line (configuration read, identity loaded, agent started). */
  readyMs: number
  /**
   * spawn of `hub run` → the printer shows `online: true` in GET /api/v1/printers with a `last_seen_at` after
   * the spawn, i.e. reported by the new process (polled every ~5 ms).
   */
  onlineMs: number
}

/**
 * Stops `hub` (SIGTERM: it reports itself offline), waits up to 3 s for its printer to show offline, then starts
 * it again from the same, already enrolled data directory (no token), `times` times. `staleOnline` counts the
 * stops after which the API still showed the printer online 3 s later (it should not: see the report).
 */
export async function measureStartUps(options: {
  hub: HubProcess
  api: ApiClient
  cloudUrl: string
  printerUri: string
  printerId: string
  env: Record<string, string>
  times: number
}): Promise<{ hub: HubProcess; runs: StartUp[]; staleOnline: number }> {
  const { api, printerId } = options
  let hub = options.hub
  const runs: StartUp[] = []
  let staleOnline = 0
  for (let i = 0; i < options.times; i++) {
    // Let the hub settle (first health poll, state report) so that the stop does not race its start.
    await new Promise((r) => setTimeout(r, 500))
    await hub.stop()
    if (!(await until(async () => !(await printerOnline(api, printerId)), 3000))) staleOnline++
    const spawnedAt = Date.now()
    const t0 = nowMs()
    hub = await startHubProcess({
      cloudUrl: options.cloudUrl,
      dataDir: hub.dataDir,
      printers: [options.printerUri],
      env: options.env,
    })
    const readyMs = nowMs() - t0
    if (!(await until(() => printerOnline(api, printerId, spawnedAt), 20_000)))
      throw new Error('the restarted hub did not bring its printer online within 20 s')
    runs.push({ readyMs, onlineMs: nowMs() - t0 })
  }
  return { hub, runs, staleOnline }
}

/**
 * The floor under both figures: an empty program under the same runtime as the hub (`node --import tsx`,
 * which runs tsx's loader on a thread of its own): spawn → its first log line (median of `times`), and its
 * RSS after `idleMs` idle.
 */
export async function runtimeBaseline(times: number, idleMs: number) {
  const program = "console.log(JSON.stringify({ msg: 'ready' })); setInterval(() => {}, 60_000)"
  const starts: number[] = []
  let rssMb = 0
  for (let i = 0; i < times; i++) {
    const t0 = nowMs()
    const child = spawn(process.execPath, ['--import', 'tsx', '-e', program], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'inherit'],
    })
    try {
      await waitForLogLine(child, (line) => line.msg === 'ready')
      starts.push(nowMs() - t0)
      if (i === times - 1) {
        await new Promise((r) => setTimeout(r, idleMs))
        rssMb = rssOf(child.pid!)
      }
    } finally {
      child.kill('SIGKILL')
      await exitOf(child)
    }
  }
  return { startMs: median(starts), rssMb }
}
