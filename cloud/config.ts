import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { type Static, type TSchema, Type } from 'typebox'
import { Compile } from 'typebox/compile'
import { maxHubPacketBytes } from './broker/hub-packet-bound.ts'
import { WILL_RECHECK_MS } from './dispatch/dispatcher.ts'
import { SILENT_MS } from './dispatch/silent-jobs.ts'
import { LOG_FORMATS } from './logging.ts'

/**
 * Cloud configuration: one TypeBox schema. Each setting's schema says what a valid value is and carries where
 * it comes from (`env`, its environment variable) and its `default`; `loadConfig` reads them once at start-up,
 * checks them against the schema and names the first bad setting in a one-line message.
 */
const MiB = 1024 * 1024
const LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const

const int = (env: string, minimum: number, maximum: number, fallback: number, description: string) =>
  Type.Integer({ minimum, maximum, env, default: fallback, description })
const port = (env: string, fallback: number, description: string) =>
  Type.Integer({ minimum: 0, maximum: 65535, env, default: fallback, description, port: true })
/** An absolute URL of one of `schemes`, without a trailing slash; `optional`: empty is allowed too. */
const url = (env: string, schemes: string[], description: string, optional = false) =>
  Type.String({
    pattern: `^${optional ? '$|^' : ''}(${schemes.join('|')})://`,
    env,
    description,
    schemes,
    ...(optional && { default: '' }),
  })
const optionalFile = (env: string, description: string) =>
  Type.String({ env, default: '', description, file: true })

export const CloudConfigSchema = Type.Object({
  host: Type.String({
    minLength: 1,
    env: 'HOST',
    default: '0.0.0.0',
    description: 'address the API and broker listen on',
  }),
  port: port('PORT', 8080, 'HTTP API port'),
  mqttPort: port('MQTT_PORT', 1883, 'embedded MQTT broker port'),
  dataDir: Type.String({
    minLength: 1,
    env: 'DATA_DIR',
    default: './data',
    description: 'SQLite database and documents',
    directory: true,
  }),
  databaseUrl: url(
    'DATABASE_URL',
    ['postgres', 'postgresql'],
    'PostgreSQL for every repository: postgres://user:password@host:5432/db (a socket: ?host=/run/postgresql); empty (default): SQLite in DATA_DIR',
    true,
  ),
  publicUrl: url(
    'PUBLIC_URL',
    ['http', 'https'],
    'base URL clients and hubs use; default http://localhost:PORT',
  ),
  logLevel: Type.Enum(LEVELS, { env: 'LOG_LEVEL', default: 'info', description: 'pino log level' }),
  logFormat: Type.Enum(LOG_FORMATS, {
    env: 'LOG_FORMAT',
    default: 'auto',
    description: '`auto`: pretty lines on a terminal, JSON otherwise; `json` or `pretty` force one',
  }),
  accessTokenTtlSeconds: int(
    'ACCESS_TOKEN_TTL_SECONDS',
    60,
    86400,
    3600,
    'RFC 6749 §5.1 expires_in of access tokens',
  ),
  maxDocumentBytes: int('MAX_DOCUMENT_BYTES', 1024, 1024 * MiB, 50 * MiB, 'largest document (413 beyond)'),
  maxBodyBytesInFlight: int(
    'MAX_BODY_BYTES_IN_FLIGHT',
    64 * 1024,
    64 * 1024 * MiB,
    256 * MiB,
    'request body bytes being received at once; a large body beyond it gets 503',
  ),
  accountStorageQuotaBytes: int(
    'ACCOUNT_STORAGE_QUOTA_BYTES',
    1024,
    1024 * 1024 * MiB,
    1024 * MiB,
    'bytes of an account’s retained documents; a document beyond it is refused (413)',
  ),
  documentRetentionHours: int(
    'DOCUMENT_RETENTION_HOURS',
    1,
    24 * 365,
    24,
    'hours a document is kept after its last job finished (or after upload, if it never had one)',
  ),
  housekeepingIntervalSeconds: int(
    'HOUSEKEEPING_INTERVAL_SECONDS',
    1,
    86400,
    300,
    'how often expired tokens, idempotency records and documents are purged',
  ),
  printQueueCapacity: int('PRINT_QUEUE_CAPACITY', 1, 1e7, 1000, 'unfinished jobs per account (409 beyond)'),
  idempotencyTtlHours: int(
    'IDEMPOTENCY_TTL_HOURS',
    24,
    24 * 30,
    24,
    'hours an Idempotency-Key is remembered',
  ),
  fetchConnectTimeoutMs: int('FETCH_CONNECT_TIMEOUT_MS', 100, 60000, 5000, 'URL documents: connect timeout'),
  fetchTotalTimeoutMs: int('FETCH_TOTAL_TIMEOUT_MS', 100, 300000, 30000, 'URL documents: total timeout'),
  fetchMaxRedirects: int('FETCH_MAX_REDIRECTS', 0, 10, 3, 'URL documents: redirects followed'),
  dnsTimeoutMs: int('DNS_TIMEOUT_MS', 50, 30000, 2000, 'URL documents: timeout of one DNS query'),
  dnsTries: int('DNS_TRIES', 1, 5, 2, 'URL documents: tries of each DNS query'),
  inspectionTimeoutMs: int('INSPECTION_TIMEOUT_MS', 100, 300000, 15000, 'Ghostscript inspection deadline'),
  inspectionMaxConcurrent: int('INSPECTION_MAX_CONCURRENT', 1, 64, 2, 'Ghostscript inspections at once'),
  inspectionMaxQueued: int('INSPECTION_MAX_QUEUED', 0, 10000, 32, 'inspections waiting (503 beyond)'),
  inspectionMaxQueuedPerAccount: int(
    'INSPECTION_MAX_QUEUED_PER_ACCOUNT',
    0,
    10000,
    8,
    'inspections one account may have waiting (503 beyond, for that account only)',
  ),
  rateLimitWindowSeconds: int('RATE_LIMIT_WINDOW_SECONDS', 1, 86400, 60, 'window of the request quotas'),
  rateLimitPerIp: int(
    'RATE_LIMIT_PER_IP',
    1,
    1e9,
    1200,
    'requests per client address (IPv6: per /64) per window',
  ),
  rateLimitPerAccount: int('RATE_LIMIT_PER_ACCOUNT', 1, 1e9, 600, 'requests per account per window'),
  rateLimitPerHub: int('RATE_LIMIT_PER_HUB', 1, 1e9, 1200, 'agent API requests per hub per window'),
  rateLimitPerApplication: int(
    'RATE_LIMIT_PER_APPLICATION',
    1,
    1e9,
    600,
    'developer and partner API requests per application per window',
  ),
  rateLimitPerInstallation: int(
    'RATE_LIMIT_PER_INSTALLATION',
    1,
    1e9,
    600,
    '/api/v1 requests per app installation (its tokens) per window',
  ),
  tokenFailureWindowSeconds: int(
    'TOKEN_FAILURE_WINDOW_SECONDS',
    1,
    86400,
    900,
    'window of failed token requests',
  ),
  tokenFailuresPerIp: int(
    'TOKEN_FAILURES_PER_IP',
    1,
    1e6,
    20,
    'failed token requests per address per window',
  ),
  tokenFailuresPerClient: int(
    'TOKEN_FAILURES_PER_CLIENT',
    1,
    1e6,
    10,
    'failed token requests per client id and address per window',
  ),
  redisUrl: url(
    'REDIS_URL',
    ['redis', 'rediss'],
    'Redis that keeps the request quotas, shared by every cloud node; empty (default): in this process',
    true,
  ),
  mqttTlsCertFile: optionalFile('MQTT_TLS_CERT_FILE', 'PEM certificate: MQTT over TLS'),
  mqttTlsKeyFile: optionalFile('MQTT_TLS_KEY_FILE', 'PEM private key: MQTT over TLS'),
  mqttPublicUrl: url(
    'MQTT_PUBLIC_URL',
    ['mqtt', 'mqtts'],
    'where hubs reach the broker; empty (default): the host name each hub used to reach the cloud, with MQTT_PORT',
    true,
  ),
  mqttUrl: url(
    'MQTT_URL',
    ['mqtt', 'mqtts'],
    'external MQTT broker (Mosquitto 2.0 set up by `cloud mosquitto-config`) the cloud connects to; empty (default): the embedded broker on MQTT_PORT',
    true,
  ),
  mqttAdminUsername: Type.String({
    minLength: 1,
    maxLength: 128,
    env: 'MQTT_ADMIN_USERNAME',
    default: 'print-hub-cloud',
    description:
      'with MQTT_URL: the cloud’s own user name on the broker (as `cloud mosquitto-config` wrote it)',
  }),
  mqttAdminPasswordFile: optionalFile(
    'MQTT_ADMIN_PASSWORD_FILE',
    'with MQTT_URL: file holding the cloud’s broker password (DIR/cloud-password, written by `cloud mosquitto-config`)',
  ),
  mqttClientId: Type.String({
    pattern: '^[A-Za-z0-9._-]{0,64}$',
    env: 'MQTT_CLIENT_ID',
    default: '',
    description:
      'with MQTT_URL: this node’s MQTT client id, unique among the nodes running at once (nothing is kept under it once the node has gone, so it need not be reused); default cloud-<hostname>-<PORT>-<random>',
  }),
  hubKeepaliveSeconds: int('HUB_KEEPALIVE_SECONDS', 1, 3600, 30, 'a lost hub is noticed within this'),
  mqttConnectTimeoutMs: int(
    'MQTT_CONNECT_TIMEOUT_MS',
    500,
    60000,
    5000,
    'time a new MQTT connection has to send its CONNECT (TLS handshake included)',
  ),
  // 256 MiB - 1: the largest Remaining Length MQTT 3.1.1 §2.2.3 can express.
  mqttMaxPacketBytes: int(
    'MQTT_MAX_PACKET_BYTES',
    4096,
    256 * MiB - 1,
    maxHubPacketBytes(),
    'largest MQTT packet from an authenticated hub; default: the largest hub message the schemas allow',
  ),
  mqttMaxPendingConnections: int(
    'MQTT_MAX_PENDING_CONNECTIONS',
    1,
    100000,
    512,
    'MQTT connections not authenticated yet; beyond it new ones are closed at once',
  ),
  mqttMaxConnections: int(
    'MQTT_MAX_CONNECTIONS',
    1,
    1000000,
    20000,
    'with MQTT_URL: hub connections the broker holds at once, pending ones included (`cloud mosquitto-config` writes it into the hubs’ front and Mosquitto)',
  ),
  pendingJobExpirySeconds: int(
    'PENDING_JOB_EXPIRY_SECONDS',
    1,
    30 * 86400,
    3600,
    'a job still pending this long expires',
  ),
  databaseBusyTimeoutMs: int(
    'DATABASE_BUSY_TIMEOUT_MS',
    0,
    60000,
    5000,
    'how long a write waits for a locked database before it fails (SQLite busy_timeout)',
  ),
  cancelConfirmTimeoutMs: int(
    'CANCEL_CONFIRM_TIMEOUT_MS',
    0,
    60000,
    5000,
    'how long a cancel waits for the hub to confirm it dropped the job before answering 202',
  ),
  silentJobMs: int(
    'SILENT_JOB_MS',
    100,
    3_600_000,
    SILENT_MS,
    'a job its hub holds is asked about again once nothing was heard of it this long (looked for every half of it)',
  ),
  willRecheckMs: int(
    'WILL_RECHECK_MS',
    100,
    600_000,
    WILL_RECHECK_MS,
    'a hub a last will took offline is asked who is here this long after, if it is still offline then',
  ),
  enrollmentTtlHours: int('ENROLLMENT_TTL_HOURS', 1, 24 * 90, 24, 'lifetime of an enrollment token'),
  consoleIdleMinutes: int(
    'CONSOLE_IDLE_MINUTES',
    1,
    24 * 60,
    30,
    'a console session ends after this long without a request (docs/console.md)',
  ),
  consoleSessionHours: int(
    'CONSOLE_SESSION_HOURS',
    1,
    24 * 30,
    12,
    'a console session ends this long after sign-in, however busy',
  ),
  consoleSignInFailuresPerIp: int(
    'CONSOLE_SIGN_IN_FAILURES_PER_IP',
    3,
    1_000_000,
    30,
    'failed console sign-ins from one address per 15 min before it is refused (slowed from a third of it)',
  ),
  consoleSignInFailuresPerEmail: int(
    'CONSOLE_SIGN_IN_FAILURES_PER_EMAIL',
    3,
    1_000_000,
    10,
    'failed console sign-ins for one e-mail per 15 min before it is refused (slowed from a third of it)',
  ),
  setPasswordTtlHours: int(
    'SET_PASSWORD_TTL_HOURS',
    1,
    24 * 30,
    72,
    'lifetime of a console user’s one-time set-password link',
  ),
  trustProxy: Type.Union(
    [Type.Boolean(), Type.Integer({ minimum: 0 }), Type.String({ pattern: '^[0-9A-Fa-f.:/,\\s]+$' })],
    {
      env: 'TRUST_PROXY',
      default: false,
      description: 'behind a reverse proxy: true, a hop count, or the proxies’ addresses (comma-separated)',
    },
  ),
})
export type CloudConfig = Static<typeof CloudConfigSchema>
type Key = keyof CloudConfig

/** What a setting's schema carries besides JSON Schema's own keywords (see the builders above). */
interface SettingOptions {
  env: string
  default?: unknown
  description?: string
  type?: string
  minimum?: number
  maximum?: number
  enum?: readonly string[]
  pattern?: string
  port?: boolean
  schemes?: string[]
  file?: boolean
}
const settingOf = (schema: TSchema) => schema as unknown as SettingOptions

/** Where each setting comes from and what it is, for `--help` and the README. */
export const SETTINGS = Object.fromEntries(
  Object.entries(CloudConfigSchema.properties).map(([key, schema]) => {
    const { env, description = '' } = settingOf(schema)
    return [key, { env, default: settingOf(schema).default, description }]
  }),
) as Record<Key, { env: string; default: unknown; description: string }>

/** Defaults that follow from other settings. */
const DERIVED_DEFAULTS: Partial<Record<Key, (config: Partial<CloudConfig>) => unknown>> = {
  publicUrl: (config) => `http://localhost:${config.port}`,
}

export class ConfigError extends Error {
  constructor(
    readonly setting: string,
    message: string,
  ) {
    super(`${setting}: ${message}`)
    this.name = 'ConfigError'
  }
}

/** Environment text → a value of the setting's schema; throws what the value must be when it cannot be. */
function fromText(key: Key, schema: SettingOptions, raw: string): unknown {
  const must = (why: string): never => {
    throw new ConfigError(schema.env, `${why} (got ${JSON.stringify(raw)})`)
  }
  if (schema.port) {
    if (!/^\d{1,5}$/.test(raw) || Number(raw) > 65535) must('must be a port number from 0 to 65535')
    return Number(raw)
  }
  if (schema.type === 'integer') {
    if (!/^\d+$/.test(raw)) must('must be a whole number')
    const n = Number(raw)
    if (n < Number(schema.minimum) || n > Number(schema.maximum))
      must(`must be from ${schema.minimum} to ${schema.maximum}`)
    return n
  }
  if (Array.isArray(schema.enum)) {
    if (!schema.enum.includes(raw)) must(`must be one of ${schema.enum.join(', ')}`)
    return raw
  }
  if (Array.isArray(schema.schemes)) {
    if (raw === '' && String(schema.pattern).startsWith('^$')) return ''
    const what = `must be an absolute ${schema.schemes.join(' or ')} URL`
    let parsed: URL
    try {
      parsed = new URL(raw)
    } catch {
      return must(what)
    }
    if (!schema.schemes.includes(parsed.protocol.replace(/:$/, ''))) must(what)
    return raw.replace(/\/+$/, '')
  }
  if (schema.file) {
    if (raw !== '' && !existsSync(raw)) must('names no file')
    return raw
  }
  if (key === 'trustProxy') {
    // Behind a reverse proxy the per-address quotas must see the client, not the proxy.
    if (raw === '' || raw === 'false') return false
    if (raw === 'true') return true
    if (/^\d+$/.test(raw)) return Number(raw)
    if (!/^[0-9A-Fa-f.:/,\s]+$/.test(raw)) must('must be true, false, a hop count, or proxy addresses')
    return raw
  }
  if (raw.trim() === '') must('must not be empty')
  return raw
}

const checkConfig = Compile(CloudConfigSchema)

/** Reads every setting from `env` (defaults where unset), validates them, and prepares the data directory. */
export function loadConfig(env: Record<string, string | undefined> = process.env): CloudConfig {
  const config: Partial<Record<Key, unknown>> = {}
  for (const [key, schema] of Object.entries(CloudConfigSchema.properties) as [Key, TSchema][]) {
    const options = settingOf(schema)
    const raw = env[options.env]
    config[key] =
      raw !== undefined
        ? fromText(key, options, raw)
        : (DERIVED_DEFAULTS[key]?.(config as Partial<CloudConfig>) ?? options.default)
  }
  config.dataDir = prepareDataDir(String(config.dataDir))
  if (!checkConfig.Check(config)) {
    const first = checkConfig.Errors(config)[0]
    const key = (first?.instancePath ?? '').slice(1) as Key
    throw new ConfigError(SETTINGS[key]?.env ?? 'configuration', first?.message ?? 'invalid')
  }
  return config
}

function prepareDataDir(dir: string): string {
  const absolute = path.resolve(dir)
  try {
    mkdirSync(absolute, { recursive: true })
    // A real write, not access(2): root passes every permission check but not a read-only mount.
    const probe = path.join(absolute, `.write-probe-${process.pid}`)
    writeFileSync(probe, '')
    rmSync(probe)
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'error'
    throw new ConfigError('DATA_DIR', `${absolute} is not a writable directory (${code})`)
  }
  return absolute
}
