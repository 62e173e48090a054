import { parseArgs } from 'node:util'
import { PortUnavailableError } from './busy-ports.ts'
import { runCommand } from './cli/commands.ts'
import { NotFoundError, RefusedError, UsageError } from './cli/common.ts'
import { COMMANDS, commandHelp, generalHelp, USAGE } from './cli/usage.ts'
import { ConfigError, loadConfig } from './config.ts'
import { createLogger } from './logging.ts'
import type { startCloud } from './server.ts'
import { DataDirInUseError } from './storage/data-dir-lock.ts'

/**
 * The cloud CLI (DESIGN: Stable operator interface). Each command prints one JSON object on stdout; errors
 * are one line on stderr with a non-zero exit. Commands work on DATA_DIR whether or not the server runs.
 */
async function serve(): Promise<void> {
  const config = loadConfig()
  const logger = createLogger(config)
  // Handlers first: a signal that arrives while starting stops the cloud as soon as it is up.
  let stopping: string | null = null
  let cloud: Awaited<ReturnType<typeof startCloud>> | undefined
  const stop = (signal: string) => {
    if (stopping) return
    stopping = signal
    if (!cloud) return
    logger.info({ signal }, 'shutting down: finishing in-flight requests')
    cloud.close().then(
      () => process.exit(0),
      (error: unknown) => {
        logger.error({ err: error }, 'shutdown failed')
        process.exit(1)
      },
    )
  }
  process.on('SIGTERM', () => stop('SIGTERM'))
  process.on('SIGINT', () => stop('SIGINT'))
  // Loaded here: the server's modules take most of a second, which the other commands need not wait for.
  const { startCloud } = await import('./server.ts')
  cloud = await startCloud(config, logger)
  const pending = stopping
  if (pending) {
    stopping = null
    stop(pending)
  }
}

async function main(argv: string[]): Promise<void> {
  const words = argv.filter((arg) => !arg.startsWith('-'))
  if (argv[0] === 'help' || argv.includes('--help') || argv.includes('-h')) {
    const named = argv[0] === 'help' ? words.slice(1) : words
    // The longest command the words name: `app key add`, `client create`, `serve`.
    const name = [3, 2, 1].map((n) => named.slice(0, n).join(' ')).find((words) => COMMANDS[words]) ?? null
    process.stdout.write(name ? commandHelp(name) : generalHelp())
    return
  }
  if (argv[0] === 'serve') {
    parseArgs({ args: argv.slice(1), options: {} })
    return serve()
  }
  process.stdout.write(`${JSON.stringify(await runCommand(argv, process.env))}\n`)
}

main(process.argv.slice(2)).catch((error: unknown) => {
  if (error instanceof UsageError) {
    process.stderr.write(`cloud: ${error.message}\n${USAGE}\n`)
    process.exit(2)
  }
  if (
    error instanceof PortUnavailableError ||
    error instanceof DataDirInUseError ||
    error instanceof NotFoundError ||
    error instanceof RefusedError
  ) {
    process.stderr.write(`cloud: ${error.message}\n`)
    process.exit(1)
  }
  if (error instanceof ConfigError) {
    process.stderr.write(`cloud: bad configuration: ${error.message}\n`)
    process.exit(1)
  }
  const err = error as NodeJS.ErrnoException
  if (err.code === 'EADDRINUSE' || err.code === 'EACCES') {
    process.stderr.write(`cloud: cannot listen: ${err.message}\n`)
    process.exit(1)
  }
  if (err.code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') {
    const unknown = /'([^']+)'/.exec(err.message)?.[1] ?? err.message
    const [command, sub] = process.argv.slice(2)
    const usage = COMMANDS[`${command} ${sub}`]?.usage ?? COMMANDS[command ?? '']?.usage
    process.stderr.write(`cloud: unknown option ${unknown}\n${usage ? `usage: ${usage}` : USAGE}\n`)
    process.exit(2)
  }
  if (
    err.code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE' ||
    err.code === 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL'
  ) {
    process.stderr.write(`cloud: ${err.message}\n${USAGE}\n`)
    process.exit(2)
  }
  process.stderr.write(`cloud: ${err.message ?? String(error)}\n`)
  process.exit(1)
})
