import { mkdirSync } from 'node:fs'
import { hostname } from 'node:os'
import path from 'node:path'
import { parseArgs } from 'node:util'
import { AGENT_VERSION, type AgentTimings, HubAgent } from './agent.ts'
import { help, hubCommand, runHelp, usage } from './cli/usage.ts'
import { CloudClient, CloudError } from './cloud/cloud-client.ts'
import { CloudUrlError, parseCloudUrl } from './cloud/cloud-url.ts'
import { type HubIdentity, readIdentity, writeIdentity } from './cloud/identity.ts'
import { keepLastConnection, readLastConnection } from './cloud/last-connection.ts'
import { untilCloudAnswers, type WaitForCloudOptions } from './cloud/wait-for-cloud.ts'
import { discoverPrinters } from './discovery/index.ts'
import { createHubLogger } from './logging.ts'
import { firstRawPrinter, printPairingCode } from './pairing/code-slip.ts'
import { pairHub } from './pairing/pair-hub.ts'
import {
  type AnyPrinterSpec,
  ippPrinterUriOf,
  isIppPrinter,
  isIppUri,
  parseIppPrinterUri,
} from './printers/ipp-printer-uri.ts'
import { PrinterUriError, parsePrinterUri, printerUriOf } from './printers/printer-uri.ts'
import { Backoff } from './session/backoff.ts'
import { createTransport } from './transports/open-transport.ts'
import { CATALOG_RECORD_FILE } from './update/catalog-freshness.ts'
import { HubUpdater } from './update/hub-updater.ts'
import { InstallLayout } from './update/install-layout.ts'

/**
 * The hub CLI (docs/running-a-hub.md), `print-hub` once installed:
 *   hub run --cloud URL --data DIR [--enroll TOKEN] [--printer URI]...
 * The first run claims the enrollment token, or without one pairs by a code (hub/pairing/pair-hub.ts), and
 * keeps the hub's credential in DIR (mode 0600); later runs need neither. Errors are one line on stderr with a non-zero exit.
 */
class UsageError extends Error {}

/** The exit status that asks the service manager to start the hub again, now in the release just switched to. */
const EXIT_RESTART_INTO_RELEASE = 3
/** A new release has this long, from the switch, to connect to the cloud before it is rolled back. */
const DEFAULT_UPDATE_TRIAL_MS = 120_000

/** Timings from the environment (tests shorten them); each a whole number of milliseconds. */
function timingsFromEnv(env: NodeJS.ProcessEnv): Partial<AgentTimings> {
  const names: Record<keyof AgentTimings, string> = {
    healthIntervalMs: 'HUB_HEALTH_INTERVAL_MS',
    statusTimeoutMs: 'HUB_STATUS_TIMEOUT_MS',
    paperWaitTimeoutMs: 'HUB_PAPER_WAIT_TIMEOUT_MS',
    unreachableTimeoutMs: 'HUB_UNREACHABLE_TIMEOUT_MS',
    recheckMs: 'HUB_RECHECK_MS',
    renderDeadlineMs: 'HUB_RENDER_DEADLINE_MS',
    presenceConfirmMs: 'HUB_PRESENCE_CONFIRM_MS',
  }
  const timings: Partial<AgentTimings> = {}
  for (const [key, name] of Object.entries(names) as [keyof AgentTimings, string][]) {
    const ms = wholeMilliseconds(env, name)
    if (ms !== undefined) timings[key] = ms
  }
  return timings
}

/** HUB_RENDER_WORKERS: render worker processes, 1 to 8. */
function renderWorkersFromEnv(env: NodeJS.ProcessEnv): number | undefined {
  const raw = env.HUB_RENDER_WORKERS
  if (raw === undefined) return undefined
  if (!/^[1-8]$/.test(raw))
    throw new UsageError(`HUB_RENDER_WORKERS must be a whole number from 1 to 8 (got ${JSON.stringify(raw)})`)
  return Number(raw)
}

/** HUB_LAN_PORT, HUB_LAN_HOST, HUB_LAN_ADVERTISE: where the LAN print API listens, and whether it is advertised. */
function lanFromEnv(env: NodeJS.ProcessEnv): { port?: number; host?: string; advertise?: boolean } {
  const port = env.HUB_LAN_PORT
  if (port !== undefined && !(/^\d{1,5}$/.test(port) && Number(port) >= 1 && Number(port) <= 65535))
    throw new UsageError(`HUB_LAN_PORT must be a port number from 1 to 65535 (got ${JSON.stringify(port)})`)
  const advertise = env.HUB_LAN_ADVERTISE
  if (advertise !== undefined && advertise !== '0' && advertise !== '1')
    throw new UsageError(`HUB_LAN_ADVERTISE must be 0 or 1 (got ${JSON.stringify(advertise)})`)
  return {
    ...(port !== undefined && { port: Number(port) }),
    ...(env.HUB_LAN_HOST && { host: env.HUB_LAN_HOST }),
    ...(advertise !== undefined && { advertise: advertise === '1' }),
  }
}

function wholeMilliseconds(env: NodeJS.ProcessEnv, name: string): number | undefined {
  const raw = env[name]
  if (raw === undefined) return undefined
  if (!/^\d+$/.test(raw))
    throw new UsageError(`${name} must be a whole number of milliseconds (got ${JSON.stringify(raw)})`)
  return Number(raw)
}

/** Pairing codes printed at most (one per code, each valid 10 minutes). */
const PRINTED_CODES_MAX = 6

async function identityFor(
  cloudUrl: string,
  dataDir: string,
  token: string | undefined,
  wait: WaitForCloudOptions,
  printers: readonly AnyPrinterSpec[],
): Promise<HubIdentity> {
  const known = readIdentity(dataDir)
  if (known) return known
  const client = new CloudClient(cloudUrl)
  let printedCodes = 0
  // Without a token the hub pairs: it shows a code that an installer types on an onboarding page.
  const enrolled = token
    ? await untilCloudAnswers('enroll', () => client.enroll(token, hostname(), AGENT_VERSION), wait)
    : await pairHub({
        client,
        hostname: hostname(),
        agentVersion: AGENT_VERSION,
        wait,
        logger: wait.logger,
        announce: async (code) => {
          const printer = firstRawPrinter(printers)
          // A hub left unpaired takes a new code every 10 minutes: slips for the first hour, then the log only.
          if (!printer || ++printedCodes > PRINTED_CODES_MAX) return
          await printPairingCode(printer, createTransport(printer.transport), code)
          wait.logger.info({ printer: printer.name }, 'pairing code printed')
        },
      })
  const identity: HubIdentity = {
    agent_id: enrolled.agent_id,
    account_id: enrolled.account_id,
    name: enrolled.name,
    credential: enrolled.credential,
    cloud_url: cloudUrl,
  }
  writeIdentity(dataDir, identity)
  return identity
}

async function run(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: {
      cloud: { type: 'string' },
      data: { type: 'string' },
      enroll: { type: 'string' },
      printer: { type: 'string', multiple: true },
    },
  })
  if (!values.cloud) throw new UsageError('--cloud is required')
  if (!values.data) throw new UsageError('--data is required')
  const cloudUrl = parseCloudUrl(values.cloud)
  const timings = timingsFromEnv(process.env)
  const renderWorkers = renderWorkersFromEnv(process.env)
  const lan = lanFromEnv(process.env)
  const retryMaxMs = wholeMilliseconds(process.env, 'HUB_CLOUD_RETRY_MAX_MS') ?? 30_000
  const trialMs = wholeMilliseconds(process.env, 'HUB_UPDATE_TRIAL_MS') ?? DEFAULT_UPDATE_TRIAL_MS
  // Parsed here first so that a bad URI is a usage error before anything else happens.
  const configured = values.printer ?? []
  const ippPrinters = configured.filter(isIppUri).map(parseIppPrinterUri)
  const rasterUris = configured.filter((uri) => !isIppUri(uri))
  for (const uri of rasterUris) parsePrinterUri(uri)
  mkdirSync(values.data, { recursive: true, mode: 0o700 })
  const logger = createHubLogger(process.env)

  // Until the agent runs there is nothing to close: a signal while the cloud is awaited ends the process.
  let agent: HubAgent | undefined
  let stopping = false
  const stop = (signal: string, exitCode = 0) => {
    if (stopping) return
    stopping = true
    logger.info({ signal }, 'hub stopping')
    updater.stop()
    if (!agent) process.exit(exitCode)
    agent.stop().then(
      () => process.exit(exitCode),
      (error: unknown) => {
        logger.error({ err: error }, 'hub stop failed')
        process.exit(1)
      },
    )
  }
  process.on('SIGTERM', () => stop('SIGTERM'))
  process.on('SIGINT', () => stop('SIGINT'))
  // First, so that a release on trial gives up in time even while the cloud does not answer at all.
  const updater = new HubUpdater({
    layout: InstallLayout.fromEnv(process.env),
    running: AGENT_VERSION,
    cloudUrl,
    catalogRecordFile: path.join(values.data, CATALOG_RECORD_FILE),
    trialMs,
    logger: logger.child({ name: 'update' }),
    async restartInto(flip) {
      if (stopping || !agent) throw new Error('the hub is stopping')
      stopping = true
      updater.stop()
      // From here on the process ends whatever happens: in the new release, or (the switch failed) in this one.
      await agent.stop().catch((error: unknown) => logger.error({ err: error }, 'hub stop failed'))
      try {
        flip()
      } catch (error) {
        logger.error({ err: error }, 'the switch to the new release failed; starting this release again')
        process.exit(1)
      }
      process.exit(EXIT_RESTART_INTO_RELEASE)
    },
    onChange: () => agent?.stateChanged(),
    giveUp: (reason) => stop(`release on trial: ${reason}`, 1),
  })
  updater.start()

  const wait: WaitForCloudOptions = {
    cloudUrl,
    logger,
    backoff: new Backoff(Math.min(1000, retryMaxMs), retryMaxMs),
  }
  // Configured printers, plus USB and usblp printers found without a flag (one entry per device).
  const printers: AnyPrinterSpec[] = [...(await discoverPrinters({ configured: rasterUris })), ...ippPrinters]
  const identity = await identityFor(cloudUrl, values.data, values.enroll, wait, printers)
  const client = new CloudClient(cloudUrl, identity.credential)
  // A hub that connected before starts with the broker it was last told, without waiting for the cloud.
  const lookUp = () => untilCloudAnswers('connection', () => client.connection(), wait)
  const dataDir = values.data
  const kept = readLastConnection(dataDir)
  const connection = kept ?? (await lookUp())
  if (!kept) keepLastConnection(dataDir, connection)
  else
    lookUp().then(
      (latest) => {
        keepLastConnection(dataDir, latest)
        agent?.useBroker(latest.mqtt_url)
      },
      (error: unknown) => logger.warn({ err: error }, 'the cloud refused the connection lookup'),
    )
  agent = new HubAgent({
    identity,
    mqttUrl: connection.mqtt_url,
    keepaliveSeconds: connection.keepalive_seconds,
    dataDir: values.data,
    printers,
    createTransport: (spec) => createTransport(spec),
    describe: (spec) => (isIppPrinter(spec) ? ippPrinterUriOf(spec) : printerUriOf(spec)),
    logger,
    timings,
    renderWorkers,
    updates: updater,
    lan,
  })
  agent.start()
  logger.info(
    {
      agent_id: identity.agent_id,
      cloud: cloudUrl,
      mqtt: connection.mqtt_url,
      data_dir: values.data,
      printers: printers.map((p) => ({
        key: p.key,
        name: p.name,
        language: isIppPrinter(p) ? 'ipp' : p.language,
      })),
    },
    'hub ready',
  )
}

/** Help and errors name the command as typed: `print-hub` installed, `hub` (npm run -s hub --) in a checkout. */
const program = hubCommand(process.env)

async function main(argv: string[]): Promise<void> {
  if (argv[0] === 'help' || argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(argv[0] === 'run' || argv[1] === 'run' ? runHelp(program) : help(program))
    return
  }
  const [command, ...rest] = argv
  if (command === 'run') return run(rest)
  throw new UsageError(command === undefined ? 'no command given' : `unknown command: ${command}`)
}

main(process.argv.slice(2)).catch((error: unknown) => {
  if (error instanceof UsageError || error instanceof PrinterUriError || error instanceof CloudUrlError) {
    process.stderr.write(`${program}: ${error.message}\n${usage(program)}\n`)
    process.exit(2)
  }
  if (error instanceof CloudError) {
    const what = error.code.startsWith('enrollment_') ? 'enrollment refused' : 'cloud refused'
    process.stderr.write(`${program}: ${what}: ${error.message} (${error.code})\n`)
    process.exit(1)
  }
  const err = error as NodeJS.ErrnoException
  if (err.code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') {
    const unknown = /'([^']+)'/.exec(err.message)?.[1] ?? err.message
    process.stderr.write(`${program}: unknown option ${unknown}\n${usage(program)}\n`)
    process.exit(2)
  }
  if (err.code?.startsWith('ERR_PARSE_ARGS')) {
    process.stderr.write(`${program}: ${err.message}\n${usage(program)}\n`)
    process.exit(2)
  }
  process.stderr.write(`${program}: ${err.message ?? String(error)}\n`)
  process.exit(1)
})
