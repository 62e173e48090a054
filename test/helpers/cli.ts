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

/** Resolves with the first stdout JSON line for which `match` holds. */
export function waitForLogLine(child: ChildProcess, match: (line: Record<string, unknown>) => boolean) {
  return new Promise<Record<string, unknown>>((resolve, reject) => {
    let buffered = ''
    const onData = (chunk: Buffer) => {
      buffered += chunk.toString('utf8')
      const lines = buffered.split('\n')
      buffered = lines.pop() ?? ''
      for (const line of lines) {
        try {
          const parsed = JSON.parse(line) as Record<string, unknown>
          if (match(parsed)) {
            child.stdout?.off('data', onData)
            resolve(parsed)
            return
          }
        } catch {
          // not a log line
        }
      }
    }
    child.stdout?.on('data', onData)
    child.once('exit', (code) => reject(new Error(`process exited with ${code} before the line appeared`)))
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
