import { parseArgs } from 'node:util'
import { SCOPES } from '../protocol/enums.ts'
import { createApiClient, isApiClientName, isScope } from './auth/new-api-client.ts'
import { PortUnavailableError } from './busy-ports.ts'
import { appCreate, appInstall, appKeyAdd } from './cli/app-commands.ts'
import { NotFoundError, option, RefusedError, UsageError, withStorage } from './cli/common.ts'
import {
  accountList,
  accountShow,
  clientList,
  hubList,
  hubShow,
  jobList,
  jobShow,
  printerList,
  printerRemove,
  printerShow,
} from './cli/inspect-commands.ts'
import { mosquittoConfig } from './cli/mosquitto-config.ts'
import { releasePin, releaseStatus, releaseUnpin } from './cli/release-commands.ts'
import { COMMANDS, commandHelp, generalHelp, USAGE } from './cli/usage.ts'
import { userCreate } from './cli/user-commands.ts'
import { ConfigError, loadConfig } from './config.ts'
import { createLogger } from './logging.ts'
import { createEnrollment, isHubName } from './onboarding/new-enrollment.ts'
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

function accountCreate(args: string[]): Promise<object> {
  const { values } = parseArgs({ args, options: { name: { type: 'string' } } })
  const name = option(values, 'name')
  return withStorage((storage) => storage.accounts.create(name))
}

function clientCreate(args: string[]): Promise<object> {
  const { values } = parseArgs({
    args,
    options: { account: { type: 'string' }, scopes: { type: 'string' }, name: { type: 'string' } },
  })
  const accountId = option(values, 'account')
  const scopes = option(values, 'scopes')
    .split(/[,\s]+/)
    .filter((s) => s !== '')
  const unknown = scopes.filter((s) => !isScope(s))
  if (unknown.length > 0)
    throw new UsageError(`unknown scope ${unknown.join(', ')}; known: ${SCOPES.join(', ')}`)
  const name = values.name ?? null
  if (name !== null && !isApiClientName(name))
    throw new UsageError('--name must be 1 to 100 characters, without NUL')
  return withStorage(async (storage) => {
    if (!(await storage.accounts.findById(accountId))) throw new UsageError(`no account ${accountId}`)
    const { client, secret } = await createApiClient(storage, accountId, scopes.filter(isScope), name)
    return {
      client_id: client.client_id,
      client_secret: secret,
      account_id: accountId,
      name: client.name,
      scopes: client.scopes,
    }
  })
}

/** Its tokens stop working at once and its secret gets no more (the server reads the same database). */
function clientRevoke(args: string[]): Promise<object> {
  const { values } = parseArgs({ args, options: { id: { type: 'string' } } })
  const id = option(values, 'id')
  return withStorage(async (storage) => {
    const client = await storage.apiClients.revoke(id, new Date())
    if (!client) throw new NotFoundError(`no client ${id}`)
    return { client_id: client.client_id, account_id: client.account_id, revoked_at: client.revoked_at }
  })
}

/** Its credential stops working at once; a running cloud closes its MQTT session within a second. */
function hubRevoke(args: string[]): Promise<object> {
  const { values } = parseArgs({ args, options: { id: { type: 'string' } } })
  const id = option(values, 'id')
  return withStorage(async (storage) => {
    const revoked = await storage.agents.revoke(id, new Date())
    if (!revoked) throw new NotFoundError(`no hub ${id}`)
    return revoked
  })
}

function enrollmentCreate(args: string[]): Promise<object> {
  const { values } = parseArgs({ args, options: { account: { type: 'string' }, name: { type: 'string' } } })
  const accountId = option(values, 'account')
  const name = option(values, 'name')
  // The partner API's and the console's rule for a hub's name.
  if (!isHubName(name)) throw new UsageError('--name must be 1 to 200 characters, without NUL')
  const config = loadConfig()
  return withStorage(async (storage) => {
    if (!(await storage.accounts.findById(accountId))) throw new UsageError(`no account ${accountId}`)
    const { enrollment, token } = await createEnrollment(storage.enrollments, {
      accountId,
      name,
      ttlHours: config.enrollmentTtlHours,
    })
    return {
      enrollment_id: enrollment.enrollment_id,
      token,
      expires_at: enrollment.expires_at,
      state: enrollment.state,
    }
  })
}

function enrollmentRevoke(args: string[]): Promise<object> {
  const { values } = parseArgs({ args, options: { id: { type: 'string' } } })
  const id = option(values, 'id')
  return withStorage(async (storage) => {
    const enrollment = await storage.enrollments.findById(id)
    if (!enrollment) throw new UsageError(`no enrollment ${id}`)
    if (!(await storage.enrollments.revoke(id, new Date()))) {
      throw new UsageError(
        `enrollment ${id} is ${enrollment.state}; only a pending enrollment can be revoked`,
      )
    }
    return { enrollment_id: id, state: 'revoked' }
  })
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
  const [command, sub, ...rest] = argv
  if (command === 'serve') {
    parseArgs({ args: argv.slice(1), options: {} })
    return serve()
  }
  if (command === 'mosquitto-config') {
    process.stdout.write(`${JSON.stringify(await mosquittoConfig(argv.slice(1)))}\n`)
    return
  }
  const commands: Record<string, (args: string[]) => Promise<object>> = {
    'account create': accountCreate,
    'account list': accountList,
    'account show': accountShow,
    'client create': clientCreate,
    'client list': clientList,
    'client revoke': clientRevoke,
    'hub list': hubList,
    'hub show': hubShow,
    'hub revoke': hubRevoke,
    'release pin': releasePin,
    'release unpin': releaseUnpin,
    'release status': releaseStatus,
    'printer list': printerList,
    'printer show': printerShow,
    'printer remove': printerRemove,
    'job list': jobList,
    'job show': jobShow,
    'enrollment create': enrollmentCreate,
    'enrollment revoke': enrollmentRevoke,
    'app create': appCreate,
    'app install': appInstall,
    'user create': userCreate,
  }
  // Three words: `app key add`.
  if (command === 'app' && sub === 'key' && rest[0] === 'add') {
    process.stdout.write(`${JSON.stringify(await appKeyAdd(rest.slice(1)))}\n`)
    return
  }
  const run = commands[`${command} ${sub}`]
  if (!run)
    throw new UsageError(command === undefined ? 'no command given' : `unknown command: ${argv.join(' ')}`)
  process.stdout.write(`${JSON.stringify(await run(rest))}\n`)
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
