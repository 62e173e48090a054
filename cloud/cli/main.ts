import { PortUnavailableError } from '../busy-ports.ts'
import { ConfigError } from '../config.ts'
import { DataDirInUseError } from '../storage/data-dir-lock.ts'
import { runCommand } from './commands.ts'
import { type Environment, NotFoundError, RefusedError, UsageError } from './common.ts'
import { COMMANDS, commandHelp, generalHelp, USAGE } from './usage.ts'

/** Where the CLI writes: the process's streams, or a test's buffers. */
export interface CliOutput {
  stdout(text: string): void
  stderr(text: string): void
}

/**
 * The cloud CLI (docs/operations.md: operator commands) for every command but `serve`: help, or one JSON object on
 * stdout, or one error line on stderr (with the usage for a usage error) → the exit code. `cloud/cli.ts` runs
 * it with the process's arguments, environment and streams; tests run it in-process with their own.
 */
export async function runCloudCli(argv: string[], env: Environment, out: CliOutput): Promise<number> {
  try {
    const words = argv.filter((arg) => !arg.startsWith('-'))
    if (argv[0] === 'help' || argv.includes('--help') || argv.includes('-h')) {
      const named = argv[0] === 'help' ? words.slice(1) : words
      // The longest command the words name: `app key add`, `client create`, `serve`.
      const name = [3, 2, 1].map((n) => named.slice(0, n).join(' ')).find((words) => COMMANDS[words]) ?? null
      out.stdout(name ? commandHelp(name) : generalHelp())
      return 0
    }
    out.stdout(`${JSON.stringify(await runCommand(argv, env))}\n`)
    return 0
  } catch (error) {
    return reportError(error, argv, out)
  }
}

/** An error of a command (or of `serve`'s start) → its line on stderr and the exit code. */
export function reportError(error: unknown, argv: string[], out: CliOutput): number {
  if (error instanceof UsageError) {
    out.stderr(`cloud: ${error.message}\n${USAGE}\n`)
    return 2
  }
  if (
    error instanceof PortUnavailableError ||
    error instanceof DataDirInUseError ||
    error instanceof NotFoundError ||
    error instanceof RefusedError
  ) {
    out.stderr(`cloud: ${error.message}\n`)
    return 1
  }
  if (error instanceof ConfigError) {
    out.stderr(`cloud: bad configuration: ${error.message}\n`)
    return 1
  }
  const err = error as NodeJS.ErrnoException
  if (err.code === 'EADDRINUSE' || err.code === 'EACCES') {
    out.stderr(`cloud: cannot listen: ${err.message}\n`)
    return 1
  }
  if (err.code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') {
    const unknown = /'([^']+)'/.exec(err.message)?.[1] ?? err.message
    const [command, sub] = argv
    const usage = COMMANDS[`${command} ${sub}`]?.usage ?? COMMANDS[command ?? '']?.usage
    out.stderr(`cloud: unknown option ${unknown}\n${usage ? `usage: ${usage}` : USAGE}\n`)
    return 2
  }
  if (
    err.code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE' ||
    err.code === 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL'
  ) {
    out.stderr(`cloud: ${err.message}\n${USAGE}\n`)
    return 2
  }
  out.stderr(`cloud: ${err.message ?? String(error)}\n`)
  return 1
}
