import { type ChildProcess, spawn } from 'node:child_process'
import { EventEmitter } from 'node:events'
import { exitOf, hasExited } from '../helpers/cli.ts'

/**
 * A small stand-in for systemd in tests: it runs the hub's launcher and starts it again whenever it exits
 * with a failure, as print-hub.service does (Restart=on-failure, RestartPreventExitStatus=2), after
 * `restartDelayMs` (RestartSec). Every stdout JSON line and stderr line of every run is kept, with the run
 * it came from (1, 2, ...).
 */
export interface LogLine {
  run: number
  line: Record<string, unknown>
}

export interface Supervised {
  /** The process of the latest run. */
  current(): ChildProcess
  runs(): number
  /** Every JSON log line of every run so far. */
  lines(): LogLine[]
  /** Exit codes (null: a signal) of the runs that ended, in order. */
  exits(): (number | null)[]
  /** Resolves with the first JSON log line, of any run so far or to come, for which `match` holds. */
  waitForLine(match: (line: Record<string, unknown>, run: number) => boolean): Promise<LogLine>
  /** Resolves once `n` runs have ended, with the exit code of the n-th. */
  waitForExit(n: number): Promise<number | null>
  /** Resolves once a stderr line contains `text`. */
  waitForStderr(text: string): Promise<void>
  stderr(): string
  /** Stops the current run (SIGTERM) and does not start another. */
  stop(): Promise<void>
}

export function supervise(
  command: string,
  args: string[],
  options: {
    env?: NodeJS.ProcessEnv
    cwd?: string
    restartDelayMs?: number
    /** Starts one run instead of child_process.spawn (with its `env` and `cwd`): its stdout and stderr piped. */
    spawn?: (command: string, args: string[]) => ChildProcess
  },
): Supervised {
  const events = new EventEmitter()
  const lines: LogLine[] = []
  const exits: (number | null)[] = []
  let stderr = ''
  let run = 0
  let stopped = false
  let child!: ChildProcess
  let timer: NodeJS.Timeout | undefined

  const start = () => {
    run++
    const thisRun = run
    child =
      options.spawn?.(command, args) ??
      spawn(command, args, { cwd: options.cwd, env: options.env, stdio: ['ignore', 'pipe', 'pipe'] })
    let buffered = ''
    child.stdout?.on('data', (chunk: Buffer) => {
      buffered += chunk.toString('utf8')
      const parts = buffered.split('\n')
      buffered = parts.pop() ?? ''
      for (const part of parts) {
        try {
          const entry = { run: thisRun, line: JSON.parse(part) as Record<string, unknown> }
          lines.push(entry)
          events.emit('line', entry)
        } catch {
          // not a log line
        }
      }
    })
    child.stderr?.on('data', (chunk: Buffer) => {
      stderr += chunk.toString('utf8')
      events.emit('stderr')
    })
    child.once('exit', (code, signal) => {
      exits.push(signal ? null : code)
      events.emit('exit')
      if (stopped || code === 0 || code === 2) return
      timer = setTimeout(start, options.restartDelayMs ?? 200)
    })
  }
  start()

  return {
    current: () => child,
    runs: () => run,
    lines: () => [...lines],
    exits: () => [...exits],
    stderr: () => stderr,
    waitForLine(match) {
      const found = lines.find((l) => match(l.line, l.run))
      if (found) return Promise.resolve(found)
      return new Promise((resolve) => {
        const onLine = (entry: LogLine) => {
          if (!match(entry.line, entry.run)) return
          events.off('line', onLine)
          resolve(entry)
        }
        events.on('line', onLine)
      })
    },
    waitForExit(n) {
      if (exits.length >= n) return Promise.resolve(exits[n - 1] ?? null)
      return new Promise((resolve) => {
        const onExit = () => {
          if (exits.length < n) return
          events.off('exit', onExit)
          resolve(exits[n - 1] ?? null)
        }
        events.on('exit', onExit)
      })
    },
    waitForStderr(text) {
      if (stderr.includes(text)) return Promise.resolve()
      return new Promise((resolve) => {
        const onStderr = () => {
          if (!stderr.includes(text)) return
          events.off('stderr', onStderr)
          resolve()
        }
        events.on('stderr', onStderr)
      })
    },
    async stop() {
      stopped = true
      clearTimeout(timer)
      if (!hasExited(child)) {
        child.kill('SIGTERM')
        await exitOf(child)
      }
    },
  }
}
