import { readFileSync } from 'node:fs'
import { childrenOf } from './hub-footprint.ts'

/** Clock ticks per second of utime and stime in /proc/<pid>/stat (USER_HZ: 100 on Linux, proc(5)). */
const TICKS_PER_SECOND = 100

/**
 * CPU seconds (user and system) a process has used so far, and with `reaped` those of its children that ended
 * and that it waited for; 0 once it has ended.
 */
function cpuSecondsOfOne(pid: number, reaped = false): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    // After `pid (comm) `: state is field 3; utime, stime, cutime and cstime fields 14 to 17 (proc(5)).
    const fields = stat
      .slice(stat.lastIndexOf(')') + 2)
      .split(' ')
      .map(Number)
    const own = fields[11]! + fields[12]!
    return (reaped ? own + fields[13]! + fields[14]! : own) / TICKS_PER_SECOND
  } catch {
    return 0
  }
}

/**
 * CPU seconds used so far by a process and, with `withChildren`, by its children: those running now, and
 * those that ended (PostgreSQL's backends come and go as the nodes' pools open and close connections).
 */
export function cpuSecondsOf(pid: number, withChildren = false): number {
  const children = withChildren ? childrenOf(pid) : []
  return children.reduce((sum, each) => sum + cpuSecondsOfOne(each), cpuSecondsOfOne(pid, withChildren))
}

/** Processes whose CPU is measured together (`withChildren`: PostgreSQL's backends too). */
export interface MeasuredProcess {
  name: string
  pids: number[]
  withChildren?: boolean
}

/** Processes' CPU over a measured time, % of one core. */
export interface CpuShare {
  name: string
  percent: number
}

/** Starts measuring; the function returned gives each one's share of one core since the start. */
export function measureCpu(processes: MeasuredProcess[]): () => CpuShare[] {
  const cpu = () =>
    processes.map((p) => p.pids.reduce((sum, pid) => sum + cpuSecondsOf(pid, p.withChildren), 0))
  const [before, startedAt] = [cpu(), performance.now()]
  return () => {
    const [after, elapsed] = [cpu(), (performance.now() - startedAt) / 1000]
    return processes.map((p, i) => ({ name: p.name, percent: ((after[i]! - before[i]!) / elapsed) * 100 }))
  }
}

/** `name a %, name b %, …`, and their sum. */
export function formatCpu(shares: CpuShare[]): string {
  const sum = shares.reduce((total, share) => total + share.percent, 0)
  return `${sum.toFixed(0)} % (${shares.map((s) => `${s.name} ${s.percent.toFixed(0)}`).join(', ')})`
}
