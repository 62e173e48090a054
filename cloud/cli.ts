import { parseArgs } from 'node:util'
import { type CliOutput, reportError, runCloudCli } from './cli/main.ts'
import { loadConfig } from './config.ts'
import { createLogger } from './logging.ts'
import type { startCloud } from './server.ts'

/**
 * The cloud CLI (docs/operations.md: operator commands). Each command prints one JSON object on stdout; errors
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

const PROCESS_OUTPUT: CliOutput = {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
}

const argv = process.argv.slice(2)
// `serve` runs until a signal; every other command (and help) is one call.
if (argv[0] === 'serve' && !argv.includes('--help') && !argv.includes('-h')) {
  try {
    parseArgs({ args: argv.slice(1), options: {} })
    await serve()
  } catch (error) {
    process.exit(reportError(error, argv, PROCESS_OUTPUT))
  }
} else {
  process.exitCode = await runCloudCli(argv, process.env, PROCESS_OUTPUT)
}
