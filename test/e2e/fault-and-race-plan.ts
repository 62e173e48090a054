import { CANCEL_MODES, type CancelMode, type FaultCounts } from './fault-and-race-verdict.ts'
import { seededRandom } from './receipts.ts'

/** What a fault-and-race run does (fault-and-race.ts); everything random in it comes from `seed`. */
export interface FaultAndRaceOptions {
  jobs: number
  seed: number
  faults: FaultCounts
  /** Share of jobs that get a cancel (default 0.3). */
  cancelShare?: number
  /** Share of jobs whose create is sent a second time after its answer, as after a lost response (0.05). */
  resendShare?: number
  /** Creates in flight at once (4). */
  concurrency?: number
  /** At most this many accepted jobs not yet seen at a printer (or cancelled), so faults hit a flowing queue. */
  window?: number
  /** Bound on the whole run; the run throws beyond it. */
  timeLimitMs: number
  log?: (line: string) => void
}

export type FaultKind = 'hub-kill' | 'cloud-kill' | 'broker-cut' | 'api-cut'
export interface FaultPlan {
  atJob: number
  kind: FaultKind
  delayMs: number
  outageMs: number
}
export interface JobPlan {
  printer: number
  cancel: CancelMode | null
  cancelDelayMs: number
  resend: boolean
}

/** Everything random about a run comes from its seed, drawn up front so that concurrency cannot reorder it. */
export function planRun(options: FaultAndRaceOptions) {
  const next = seededRandom(options.seed)
  const pick = <T>(items: readonly T[]) => items[Math.floor(next() * items.length)]!
  const jobs: JobPlan[] = Array.from({ length: options.jobs }, () => ({
    printer: next() < 0.5 ? 0 : 1,
    cancel: next() < (options.cancelShare ?? 0.3) ? pick(CANCEL_MODES) : null,
    cancelDelayMs: Math.floor(next() * 60),
    resend: next() < (options.resendShare ?? 0.05),
  }))
  const kinds: [FaultKind, number][] = [
    ['hub-kill', options.faults.hubKills],
    ['cloud-kill', options.faults.cloudKills],
    ['broker-cut', options.faults.brokerCuts],
    ['api-cut', options.faults.apiCuts],
  ]
  const faults: FaultPlan[] = kinds.flatMap(([kind, count]) =>
    Array.from({ length: count }, () => ({
      kind,
      atJob: Math.floor(options.jobs * (0.05 + 0.85 * next())),
      delayMs: Math.floor(next() * 300),
      outageMs: Math.floor(next() * (kind === 'broker-cut' ? 2500 : 600)),
    })),
  )
  faults.sort((a, b) => a.atJob - b.atJob)
  return { jobs, faults }
}
