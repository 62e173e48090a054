import { SILENT_MS } from '../dispatch/silent-jobs.ts'
import { WILL_RECHECK_MS } from '../presence/will-recheck.ts'
import { int } from './setting-builders.ts'

/** Print jobs: each account's queue, and how long the cloud waits on a job and its hub. */
export const JOB_SETTINGS = {
  printQueueCapacity: int('PRINT_QUEUE_CAPACITY', 1, 1e7, 1000, 'unfinished jobs per account (409 beyond)'),
  pendingJobExpirySeconds: int(
    'PENDING_JOB_EXPIRY_SECONDS',
    1,
    30 * 86400,
    3600,
    'a job still pending this long expires',
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
}
