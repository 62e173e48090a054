import { setImmediate as nextTurn } from 'node:timers/promises'
import type { Logger } from 'pino'
import type { BlobStore } from '../storage/blob-store.ts'
import type { Storage } from '../storage/storage.ts'

export interface HousekeepingOptions {
  storage: Storage
  blobs: BlobStore
  logger: Logger
  intervalMs: number
  /** A document is kept this long after its last job finished (or after upload, if it never had one). */
  documentRetentionHours: number
  /** Epoch milliseconds; tests inject a clock. */
  now?: () => number
}

export type HousekeepingStep =
  | 'access_tokens'
  | 'idempotency_keys'
  | 'console_sessions'
  | 'documents'
  | 'blobs'
  | 'webhook_deliveries'

/** What one pass removed per step; a step that failed (logged) is listed in `failed`. */
export type HousekeepingPass = Record<HousekeepingStep, number> & { failed: HousekeepingStep[] }

/** Rows per transaction, so that a backlog never holds the write lock for long. */
const BATCH = 500
/**
 * A blob file kept or reused this recently may belong to an intake that is about to record its document;
 * its deletion waits for a later pass (see `BlobStore.deleteIfUnusedSince`).
 */
const BLOB_REUSE_GRACE_MS = 10 * 60_000
/** How long an ended webhook delivery, its attempts and its event stay listed (docs/webhooks.md). */
export const WEBHOOK_RETENTION_DAYS = 30

/**
 * Keeps the cloud's storage bounded: purges expired access tokens, idempotency records and console sessions,
 * purges documents no unfinished job needs once their retention has passed, then deletes the blob files that
 * no retained document names (rows first, files after), and webhook deliveries that ended more than
 * WEBHOOK_RETENTION_DAYS ago with their attempts and events. Each step is idempotent, so several cloud nodes may run it;
 * each failure is logged and the next pass tries again.
 */
export class Housekeeping {
  readonly #o: HousekeepingOptions
  readonly #now: () => number
  #timer: NodeJS.Timeout | undefined
  #pass: Promise<unknown> = Promise.resolve()
  #stopped = true

  constructor(options: HousekeepingOptions) {
    this.#o = options
    this.#now = options.now ?? Date.now
  }

  /** Runs a pass at once, then one every `intervalMs` after the previous pass ended. */
  start(): void {
    this.#stopped = false
    this.#schedule(0)
  }

  /** Stops the timer and waits for a pass in progress. */
  async stop(): Promise<void> {
    this.#stopped = true
    clearTimeout(this.#timer)
    await this.#pass
  }

  async runOnce(): Promise<HousekeepingPass> {
    const now = this.#now()
    const pass: HousekeepingPass = {
      access_tokens: 0,
      idempotency_keys: 0,
      console_sessions: 0,
      documents: 0,
      blobs: 0,
      webhook_deliveries: 0,
      failed: [],
    }
    const { storage } = this.#o
    // One node at a time runs a pass (Storage.exclusively); each step is idempotent all the same.
    const ran = await storage.exclusively('housekeeping', () => this.#runSteps(now, pass))
    if (ran === undefined) this.#o.logger.debug('housekeeping pass skipped: another node runs one now')
    return pass
  }

  /** Runs each step into `pass`; true once done. */
  async #runSteps(now: number, pass: HousekeepingPass): Promise<true> {
    const { storage } = this.#o
    const steps: [HousekeepingStep, () => number | Promise<number>][] = [
      // API clients' tokens and app installations' tokens alike.
      [
        'access_tokens',
        async () =>
          (await storage.apiClients.deleteExpiredTokens(now)) +
          (await storage.applications.deleteExpiredTokens(now)),
      ],
      ['idempotency_keys', () => storage.idempotency.deleteExpired(now)],
      // Console sessions past their idle expiry, signed in or not (a visit to the sign-in page makes one).
      ['console_sessions', () => storage.consoleSessions.purgeExpired(now)],
      ['documents', () => this.#purgeDocuments(now)],
      ['blobs', () => this.#deleteBlobs(now)],
      ['webhook_deliveries', () => this.#purgeWebhookDeliveries(now)],
    ]
    for (const [step, run] of steps) {
      try {
        pass[step] = await run()
      } catch (err) {
        pass.failed.push(step)
        this.#o.logger.error({ err, step }, 'housekeeping step failed; the next pass retries it')
      }
    }
    const { failed: _, ...purged } = pass
    if (Object.values(purged).some((count) => count > 0)) {
      this.#o.logger.info({ ...pass }, 'housekeeping purged')
    }
    return true
  }

  #schedule(delayMs: number): void {
    if (this.#stopped) return
    this.#timer = setTimeout(() => {
      this.#pass = this.runOnce()
        .catch((err: unknown) => this.#o.logger.error({ err }, 'housekeeping pass failed'))
        .finally(() => this.#schedule(this.#o.intervalMs))
    }, delayMs)
    this.#timer.unref()
  }

  async #purgeDocuments(now: number): Promise<number> {
    const cutoff = new Date(now - this.#o.documentRetentionHours * 3600_000).toISOString()
    const at = new Date(now).toISOString()
    let total = 0
    for (;;) {
      const purged = await this.#o.storage.documents.purgeUnneeded(cutoff, at, BATCH)
      total += purged
      if (purged < BATCH || this.#stopped) return total
      await nextTurn()
    }
  }

  async #purgeWebhookDeliveries(now: number): Promise<number> {
    const before = now - WEBHOOK_RETENTION_DAYS * 24 * 3600_000
    let total = 0
    for (;;) {
      const purged = await this.#o.storage.webhooks.purgeEnded(before, BATCH)
      total += purged
      if (purged < BATCH || this.#stopped) return total
      await nextTurn()
    }
  }

  async #deleteBlobs(now: number): Promise<number> {
    const { storage, blobs } = this.#o
    let total = 0
    for (;;) {
      const queued = await storage.documents.blobsToDelete(BATCH)
      let deleted = 0
      for (const sha256 of queued) {
        if (!(await blobs.deleteIfUnusedSince(sha256, now - BLOB_REUSE_GRACE_MS))) continue
        await storage.documents.blobDeleted(sha256)
        deleted += 1
      }
      total += deleted
      // A batch of files all still in use would come back unchanged: leave them to the next pass.
      if (queued.length < BATCH || deleted === 0 || this.#stopped) return total
    }
  }
}
