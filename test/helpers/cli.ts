import { type ChildProcess, spawn, spawnSync } from 'node:child_process'
import path from 'node:path'

export const ROOT = path.resolve(import.meta.dirname, '../..')

/** Runs one of the project's CLIs (`cloud/cli.ts`, ...) to completion, as `npm run -s cloud --` would. */
export function runCli(script: string, args: string[], env: Record<string, string>) {
  const result = spawnSync(process.execPath, ['--import', 'tsx', path.join(ROOT, script), ...args], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    encoding: 'utf8',
    timeout: 60_000,
  })
  return { status: result.status, stdout: result.stdout, stderr: result.stderr }
}

/**
 * A cloud CLI command (`account create`, `client create`, ...) run in this process through the CLI's own code,
 * with `env` over this process's environment as `runCli` gives it: the object the CLI would print, as it
 * reads back from JSON. For setting up data; `runCli` for what only a process shows (exit codes, output).
 */
export async function cloudCommand<Printed = Record<string, string>>(
  args: string[],
  env: Record<string, string>,
): Promise<Printed> {
  // Loaded on first use: files that only run CLIs as processes need not load the cloud's modules.
  const { runCommand } = await import('../../cloud/cli/commands.ts')
  const printed = await runCommand(args, { ...process.env, ...env })
  return JSON.parse(JSON.stringify(printed)) as Printed
}

/**
 * The cloud CLI (`cloud/cli.ts` but `serve`) run in this process through its own code, with `env` over this
 * process's environment: what `runCli('cloud/cli.ts', ...)` gives, without starting Node and loading the cloud
 * for each command. `runCli` for what only the process shows (its exit, signals).
 */
export async function cloudCli(args: string[], env: Record<string, string>) {
  const { runCloudCli } = await import('../../cloud/cli/main.ts')
  let stdout = ''
  let stderr = ''
  const status = await runCloudCli(
    args,
    { ...process.env, ...env },
    {
      stdout: (text) => {
        stdout += text
      },
      stderr: (text) => {
        stderr += text
      },
    },
  )
  return { status, stdout, stderr }
}

/** Starts a CLI in the background; the caller must stop it. */
export function spawnCli(script: string, args: string[], env: Record<string, string>): ChildProcess {
  return spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, script), ...args], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
}

/** How long `waitForLogLine` waits by default: less than an end-to-end test's own timeout, so that it says why. */
const LOG_LINE_WAIT_MS = 60_000
/** The lines a failed wait shows. */
const LOG_LINE_TAIL = 15
/** How much of stderr a failed wait keeps to show. */
const STDERR_KEPT_CHARS = 8_000
/** How long a failed wait reads a process's pipes after it exited, for its last words. */
const EXIT_DRAIN_MS = 500

/**
 * Resolves with the first stdout JSON line for which `match` holds. Rejects when the process exits first, or
 * when no line matched within `withinMs`; either error shows the last stdout and stderr lines the process wrote
 * meanwhile, so that a test that failed on a busy machine says what the process was doing (a CLI's own errors,
 * such as a port in use, go to stderr).
 */
export function waitForLogLine(
  child: ChildProcess,
  match: (line: Record<string, unknown>) => boolean,
  { withinMs = LOG_LINE_WAIT_MS }: { withinMs?: number } = {},
) {
  return new Promise<Record<string, unknown>>((resolve, reject) => {
    let buffered = ''
    const tail: string[] = []
    let stderr = ''
    let settled = false
    const fail = (why: string) => {
      if (settled) return
      end()
      const lines = tail.length > 0 ? tail.map((line) => `  ${line}`).join('\n') : '  (none)'
      const errors = stderr.trimEnd().split('\n').slice(-LOG_LINE_TAIL)
      const stderrLines =
        stderr.length > 0 ? `\nand on stderr:\n${errors.map((line) => `  ${line}`).join('\n')}` : ''
      reject(new Error(`${why} before a matching log line; its last lines:\n${lines}${stderrLines}`))
    }
    const onExit = (code: number | null, signal: NodeJS.Signals | null) => {
      const why = `the process exited with ${code ?? signal}`
      // What it wrote last may still be in the pipes: read them to their end (or for a moment) first.
      const drained = setTimeout(() => fail(why), EXIT_DRAIN_MS)
      child.once('close', () => {
        clearTimeout(drained)
        fail(why)
      })
    }
    const timer = setTimeout(() => fail(`${withinMs / 1000} s passed`), withinMs)
    const end = () => {
      settled = true
      clearTimeout(timer)
      child.stdout?.off('data', onData)
      child.stderr?.off('data', onStderr)
      child.off('exit', onExit)
    }
    const keep = (line: string) => {
      tail.push(line)
      if (tail.length > LOG_LINE_TAIL) tail.shift()
    }
    const onData = (chunk: Buffer) => {
      buffered += chunk.toString('utf8')
      const lines = buffered.split('\n')
      buffered = lines.pop() ?? ''
      for (const line of lines) {
        keep(line)
        try {
          const parsed = JSON.parse(line) as Record<string, unknown>
          if (match(parsed)) {
            end()
            resolve(parsed)
            return
          }
        } catch {
          // not a log line
        }
      }
    }
    const onStderr = (chunk: Buffer) => {
      stderr = (stderr + chunk.toString('utf8')).slice(-STDERR_KEPT_CHARS)
    }
    child.stdout?.on('data', onData)
    child.stderr?.on('data', onStderr)
    child.once('exit', onExit)
  })
}

/** Whether the process has ended (by exiting, or by a signal). */
export function hasExited(child: ChildProcess): boolean {
  return child.exitCode !== null || child.signalCode !== null
}

/** The exit code once the process ended; null when a signal ended it. */
export function exitOf(child: ChildProcess): Promise<number | null> {
  if (hasExited(child)) return Promise.resolve(child.exitCode)
  return new Promise((resolve) => child.once('exit', (code) => resolve(code)))
}
