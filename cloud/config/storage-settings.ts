import { Type } from 'typebox'
import { int, MiB, url } from './setting-builders.ts'

/** Where the data is kept, and how long and how much of it. */
export const STORAGE_SETTINGS = {
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
  databaseBusyTimeoutMs: int(
    'DATABASE_BUSY_TIMEOUT_MS',
    0,
    60000,
    5000,
    'how long a write waits for a locked database before it fails (SQLite busy_timeout)',
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
  idempotencyTtlHours: int(
    'IDEMPOTENCY_TTL_HOURS',
    24,
    24 * 30,
    24,
    'hours an Idempotency-Key is remembered',
  ),
}
