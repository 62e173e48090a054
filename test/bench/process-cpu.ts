import { readFileSync } from 'node:fs'
import { childrenOf } from './hub-footprint.ts'

/** Clock ticks per second of utime and stime in /proc/<pid>/stat (USER_HZ: 100 on Linux, proc(5)). */
const TICKS_PER_SECOND = 100

/** CPU seconds (user and system) a process has used so far; 0 once it has ended. */
function cpuSecondsOfOne(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    // After `pid (comm) `: state is field 3, utime and stime fields 14 and 15 (proc(5)).
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND
  } catch {
    return 0
  }
}

/** CPU seconds used so far by a process and, with `withChildren`, its child processes now (PostgreSQL's). */
export function cpuSecondsOf(pid: number, withChildren = false): number {
  const children = withChildren ? childrenOf(pid) : []
  return [pid, ...children].reduce((sum, each) => sum + cpuSecondsOfOne(each), 0)
}
