import { Type } from 'typebox'
import { LOG_FORMATS } from '../logging.ts'
import { int, MiB, port, url } from './setting-builders.ts'

const LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const

/** Where the API listens and how it is reached, its logs, and what a client may ask of it at once. */
export const SERVER_SETTINGS = {
  host: Type.String({
    minLength: 1,
    env: 'HOST',
    default: '0.0.0.0',
    description: 'address the API and broker listen on',
  }),
  port: port('PORT', 8080, 'HTTP API port'),
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
  trustProxy: Type.Union(
    [Type.Boolean(), Type.Integer({ minimum: 0 }), Type.String({ pattern: '^[0-9A-Fa-f.:/,\\s]+$' })],
    {
      env: 'TRUST_PROXY',
      default: false,
      description: 'behind a reverse proxy: true, a hop count, or the proxies’ addresses (comma-separated)',
    },
  ),
  maxBodyBytesInFlight: int(
    'MAX_BODY_BYTES_IN_FLIGHT',
    64 * 1024,
    64 * 1024 * MiB,
    256 * MiB,
    'request body bytes being received at once; a large body beyond it gets 503',
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
  redisUrl: url(
    'REDIS_URL',
    ['redis', 'rediss'],
    'Redis that keeps the request quotas, shared by every cloud node; empty (default): in this process',
    true,
  ),
}
