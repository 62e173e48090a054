import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { maxHubPacketBytes } from './broker/hub-packet-bound.ts'
import { LOG_FORMATS, type LogFormat } from './logging.ts'

/**
 * Cloud configuration: one schema of settings, each with its environment variable, default and check.
 * `loadConfig` reads them once at start-up and names the first bad setting in a one-line message.
 */
export interface CloudConfig {
  host: string
  port: number
  mqttPort: number
  dataDir: string
  publicUrl: string
  logLevel: string
  /** `auto`: pretty lines on a terminal, JSON otherwise; `json` or `pretty` force one. */
  logFormat: LogFormat
  /** RFC 6749 §5.1 `expires_in` of access tokens. */
  accessTokenTtlSeconds: number
  maxDocumentBytes: number
  maxBodyBytesInFlight: number
  /** Bytes of an account's documents kept at once (not yet purged); a document beyond it is refused. */
  accountStorageQuotaBytes: number
  /** Hours a document is kept after its last job finished (or after upload, if it never had one). */
  documentRetentionHours: number
  /** How often housekeeping purges expired tokens, idempotency records and documents. */
  housekeepingIntervalSeconds: number
  printQueueCapacity: number
  idempotencyTtlHours: number
  fetchConnectTimeoutMs: number
  fetchTotalTimeoutMs: number
  fetchMaxRedirects: number
  dnsTimeoutMs: number
  dnsTries: number
  inspectionTimeoutMs: number
  inspectionMaxConcurrent: number
  inspectionMaxQueued: number
  inspectionMaxQueuedPerAccount: number
  rateLimitWindowSeconds: number
  rateLimitPerIp: number
  rateLimitPerAccount: number
  /** Requests of one hub on the agent API per window (its own quota, not its address's). */
  rateLimitPerHub: number
  tokenFailureWindowSeconds: number
  tokenFailuresPerIp: number
  tokenFailuresPerClient: number
  /**
   * Where hubs reach the broker. Empty (the default): the host name each hub used to reach the cloud, with
   * MQTT_PORT, so that a hub on another machine is told an address that works for it.
   */
  mqttPublicUrl: string
  mqttTlsCertFile: string
  mqttTlsKeyFile: string
  hubKeepaliveSeconds: number
  /** Time a new MQTT connection has to send its CONNECT (aedes connectTimeout; TLS handshake too). */
  mqttConnectTimeoutMs: number
  /** Largest MQTT packet from an authenticated hub; by default the largest hub message the schemas allow. */
  mqttMaxPacketBytes: number
  /** MQTT connections not authenticated yet; beyond it new ones are closed at once. */
  mqttMaxPendingConnections: number
  pendingJobExpirySeconds: number
  /** How long a write waits for a locked database before it fails (SQLite busy_timeout). */
  databaseBusyTimeoutMs: number
  /** How long a cancel waits for the hub to confirm it dropped the job before answering 202. */
  cancelConfirmTimeoutMs: number
  enrollmentTtlHours: number
  /** Fastify's trustProxy: off, true, a hop count, or the proxies' addresses (comma-separated). */
  trustProxy: boolean | number | string
}

type Kind =
  | 'string'
  | 'port'
  | 'int'
  | 'url'
  | 'dir'
  | 'level'
  | 'log-format'
  | 'optional-file'
  | 'trust-proxy'
interface Setting {
  env: string
  kind: Kind
  min?: number
  max?: number
  default: (partial: Partial<CloudConfig>) => string
}

const MiB = 1024 * 1024

export const SETTINGS: Record<keyof CloudConfig, Setting> = {
  host: { env: 'HOST', kind: 'string', default: () => '0.0.0.0' },
  port: { env: 'PORT', kind: 'port', default: () => '8080' },
  mqttPort: { env: 'MQTT_PORT', kind: 'port', default: () => '1883' },
  dataDir: { env: 'DATA_DIR', kind: 'dir', default: () => './data' },
  publicUrl: { env: 'PUBLIC_URL', kind: 'url', default: (c) => `http://localhost:${c.port}` },
  logLevel: { env: 'LOG_LEVEL', kind: 'level', default: () => 'info' },
  logFormat: { env: 'LOG_FORMAT', kind: 'log-format', default: () => 'auto' },
  accessTokenTtlSeconds: {
    env: 'ACCESS_TOKEN_TTL_SECONDS',
    kind: 'int',
    min: 60,
    max: 86400,
    default: () => '3600',
  },
  maxDocumentBytes: {
    env: 'MAX_DOCUMENT_BYTES',
    kind: 'int',
    min: 1024,
    max: 1024 * MiB,
    default: () => `${50 * MiB}`,
  },
  accountStorageQuotaBytes: {
    env: 'ACCOUNT_STORAGE_QUOTA_BYTES',
    kind: 'int',
    min: 1024,
    max: 1024 * 1024 * MiB,
    default: () => `${1024 * MiB}`,
  },
  documentRetentionHours: {
    env: 'DOCUMENT_RETENTION_HOURS',
    kind: 'int',
    min: 1,
    max: 24 * 365,
    default: () => '24',
  },
  housekeepingIntervalSeconds: {
    env: 'HOUSEKEEPING_INTERVAL_SECONDS',
    kind: 'int',
    min: 1,
    max: 86400,
    default: () => '300',
  },
  maxBodyBytesInFlight: {
    env: 'MAX_BODY_BYTES_IN_FLIGHT',
    kind: 'int',
    min: 64 * 1024,
    max: 64 * 1024 * MiB,
    default: () => `${256 * MiB}`,
  },
  printQueueCapacity: { env: 'PRINT_QUEUE_CAPACITY', kind: 'int', min: 1, max: 1e7, default: () => '1000' },
  idempotencyTtlHours: {
    env: 'IDEMPOTENCY_TTL_HOURS',
    kind: 'int',
    min: 24,
    max: 24 * 30,
    default: () => '24',
  },
  fetchConnectTimeoutMs: {
    env: 'FETCH_CONNECT_TIMEOUT_MS',
    kind: 'int',
    min: 100,
    max: 60000,
    default: () => '5000',
  },
  fetchTotalTimeoutMs: {
    env: 'FETCH_TOTAL_TIMEOUT_MS',
    kind: 'int',
    min: 100,
    max: 300000,
    default: () => '30000',
  },
  fetchMaxRedirects: { env: 'FETCH_MAX_REDIRECTS', kind: 'int', min: 0, max: 10, default: () => '3' },
  dnsTimeoutMs: { env: 'DNS_TIMEOUT_MS', kind: 'int', min: 50, max: 30000, default: () => '2000' },
  dnsTries: { env: 'DNS_TRIES', kind: 'int', min: 1, max: 5, default: () => '2' },
  inspectionTimeoutMs: {
    env: 'INSPECTION_TIMEOUT_MS',
    kind: 'int',
    min: 100,
    max: 300000,
    default: () => '15000',
  },
  inspectionMaxConcurrent: {
    env: 'INSPECTION_MAX_CONCURRENT',
    kind: 'int',
    min: 1,
    max: 64,
    default: () => '2',
  },
  inspectionMaxQueued: { env: 'INSPECTION_MAX_QUEUED', kind: 'int', min: 0, max: 10000, default: () => '32' },
  inspectionMaxQueuedPerAccount: {
    env: 'INSPECTION_MAX_QUEUED_PER_ACCOUNT',
    kind: 'int',
    min: 0,
    max: 10000,
    default: () => '8',
  },
  rateLimitWindowSeconds: {
    env: 'RATE_LIMIT_WINDOW_SECONDS',
    kind: 'int',
    min: 1,
    max: 86400,
    default: () => '60',
  },
  rateLimitPerIp: { env: 'RATE_LIMIT_PER_IP', kind: 'int', min: 1, max: 1e9, default: () => '1200' },
  rateLimitPerAccount: { env: 'RATE_LIMIT_PER_ACCOUNT', kind: 'int', min: 1, max: 1e9, default: () => '600' },
  rateLimitPerHub: { env: 'RATE_LIMIT_PER_HUB', kind: 'int', min: 1, max: 1e9, default: () => '1200' },
  tokenFailureWindowSeconds: {
    env: 'TOKEN_FAILURE_WINDOW_SECONDS',
    kind: 'int',
    min: 1,
    max: 86400,
    default: () => '900',
  },
  tokenFailuresPerIp: { env: 'TOKEN_FAILURES_PER_IP', kind: 'int', min: 1, max: 1e6, default: () => '20' },
  tokenFailuresPerClient: {
    env: 'TOKEN_FAILURES_PER_CLIENT',
    kind: 'int',
    min: 1,
    max: 1e6,
    default: () => '10',
  },
  mqttTlsCertFile: { env: 'MQTT_TLS_CERT_FILE', kind: 'optional-file', default: () => '' },
  mqttTlsKeyFile: { env: 'MQTT_TLS_KEY_FILE', kind: 'optional-file', default: () => '' },
  mqttPublicUrl: {
    env: 'MQTT_PUBLIC_URL',
    kind: 'url',
    default: () => '',
  },
  hubKeepaliveSeconds: { env: 'HUB_KEEPALIVE_SECONDS', kind: 'int', min: 1, max: 3600, default: () => '30' },
  mqttConnectTimeoutMs: {
    env: 'MQTT_CONNECT_TIMEOUT_MS',
    kind: 'int',
    min: 500,
    max: 60000,
    default: () => '5000',
  },
  mqttMaxPacketBytes: {
    env: 'MQTT_MAX_PACKET_BYTES',
    kind: 'int',
    min: 4096,
    // 256 MiB - 1: the largest Remaining Length MQTT 3.1.1 §2.2.3 can express.
    max: 256 * MiB - 1,
    default: () => `${maxHubPacketBytes()}`,
  },
  mqttMaxPendingConnections: {
    env: 'MQTT_MAX_PENDING_CONNECTIONS',
    kind: 'int',
    min: 1,
    max: 100000,
    default: () => '512',
  },
  pendingJobExpirySeconds: {
    env: 'PENDING_JOB_EXPIRY_SECONDS',
    kind: 'int',
    min: 1,
    max: 30 * 86400,
    default: () => '3600',
  },
  databaseBusyTimeoutMs: {
    env: 'DATABASE_BUSY_TIMEOUT_MS',
    kind: 'int',
    min: 0,
    max: 60_000,
    default: () => '5000',
  },
  cancelConfirmTimeoutMs: {
    env: 'CANCEL_CONFIRM_TIMEOUT_MS',
    kind: 'int',
    min: 0,
    max: 60_000,
    default: () => '5000',
  },
  enrollmentTtlHours: { env: 'ENROLLMENT_TTL_HOURS', kind: 'int', min: 1, max: 24 * 90, default: () => '24' },
  trustProxy: { env: 'TRUST_PROXY', kind: 'trust-proxy', default: () => '' },
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

const LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']

function parseSetting(key: keyof CloudConfig, raw: string): string | number | boolean {
  const s = SETTINGS[key]
  const fail = (why: string): never => {
    throw new ConfigError(s.env, `${why} (got ${JSON.stringify(raw)})`)
  }
  switch (s.kind) {
    case 'port': {
      if (!/^\d{1,5}$/.test(raw)) fail('must be a port number from 0 to 65535')
      const n = Number(raw)
      if (n > 65535) fail('must be a port number from 0 to 65535')
      return n
    }
    case 'int': {
      if (!/^\d+$/.test(raw)) fail('must be a whole number')
      const n = Number(raw)
      if (n < (s.min ?? 0) || n > (s.max ?? Number.MAX_SAFE_INTEGER))
        fail(`must be from ${s.min} to ${s.max}`)
      return n
    }
    case 'url': {
      if (raw === '' && key === 'mqttPublicUrl') return ''
      const schemes = key === 'mqttPublicUrl' ? ['mqtt:', 'mqtts:'] : ['http:', 'https:']
      const what = `an absolute ${schemes.map((s) => s.replace(':', '')).join(' or ')} URL`
      let url: URL
      try {
        url = new URL(raw)
      } catch {
        return fail(`must be ${what}`)
      }
      if (!schemes.includes(url.protocol)) fail(`must be ${what}`)
      return raw.replace(/\/+$/, '')
    }
    case 'trust-proxy':
      // Behind a reverse proxy the per-address quotas must see the client, not the proxy.
      if (raw === '' || raw === 'false') return false
      if (raw === 'true') return true
      if (/^\d+$/.test(raw)) return Number(raw)
      if (!/^[0-9A-Fa-f.:/,\s]+$/.test(raw)) fail('must be true, false, a hop count, or proxy addresses')
      return raw
    case 'optional-file':
      if (raw !== '' && !existsSync(raw)) fail('names no file')
      return raw
    case 'log-format':
      if (!(LOG_FORMATS as readonly string[]).includes(raw)) fail(`must be one of ${LOG_FORMATS.join(', ')}`)
      return raw
    case 'level':
      if (!LEVELS.includes(raw)) fail(`must be one of ${LEVELS.join(', ')}`)
      return raw
    case 'dir':
    case 'string':
      if (raw.trim() === '') fail('must not be empty')
      return raw
  }
}

/** Reads every setting from `env` (defaults where unset), validates them, and prepares the data directory. */
export function loadConfig(env: Record<string, string | undefined> = process.env): CloudConfig {
  const config: Partial<Record<keyof CloudConfig, string | number | boolean>> = {}
  for (const key of Object.keys(SETTINGS) as (keyof CloudConfig)[]) {
    const raw = env[SETTINGS[key].env] ?? SETTINGS[key].default(config as Partial<CloudConfig>)
    config[key] = parseSetting(key, raw)
  }
  const result = config as unknown as CloudConfig
  result.dataDir = prepareDataDir(result.dataDir)
  return result
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
