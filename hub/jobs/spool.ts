import Database from 'better-sqlite3'
import type { FailureReason, HubPayload, JobOffer } from '../../protocol/hub-messages.ts'
import { PROTOCOL_VERSION } from '../../protocol/hub-messages.ts'

/**
 * The hub's spool (DESIGN: never lose, never double): every job offer and every message for the cloud is in
 * SQLite before anything is acknowledged or sent. A job is marked `printing` durably BEFORE its first byte
 * goes to the printer; a job found `printing` at start-up may have reached paper, so it is failed with
 * `interrupted` and never printed again.
 */
export type SpoolState = 'queued' | 'printing' | 'printed' | 'failed' | 'cancelled'

export interface SpooledJob {
  print_job_id: string
  printer_key: string
  offer: JobOffer
  state: SpoolState
}

export type OutboxTopic = 'job-ack' | 'job-status'
export interface OutboxMessage<T extends OutboxTopic = OutboxTopic> {
  seq: number
  topic: T
  payload: HubPayload<T>
}

const SCHEMA = `
  CREATE TABLE IF NOT EXISTS jobs (
    print_job_id TEXT PRIMARY KEY,
    printer_key TEXT NOT NULL,
    offer TEXT NOT NULL,
    state TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    failure_reason TEXT
  );
  CREATE INDEX IF NOT EXISTS jobs_queued ON jobs(printer_key, state, created_at);
  CREATE TABLE IF NOT EXISTS outbox (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    topic TEXT NOT NULL,
    payload TEXT NOT NULL
  );
`

interface JobRow {
  print_job_id: string
  printer_key: string
  offer: string
  state: SpoolState
  failure_reason: string | null
}

const toJob = (row: JobRow): SpooledJob => ({
  print_job_id: row.print_job_id,
  printer_key: row.printer_key,
  offer: JSON.parse(row.offer) as JobOffer,
  state: row.state,
})

export class Spool {
  readonly #db: Database.Database
  readonly #s

  constructor(file: string) {
    this.#db = new Database(file)
    this.#db.pragma('journal_mode = WAL')
    // FULL: a state change acknowledged to the cloud survives a power cut of the Pi.
    this.#db.pragma('synchronous = FULL')
    this.#db.exec(SCHEMA)
    const db = this.#db
    this.#s = {
      find: db.prepare<[string], JobRow>('SELECT * FROM jobs WHERE print_job_id = ?'),
      insert: db.prepare(
        `INSERT INTO jobs (print_job_id, printer_key, offer, state, created_at, updated_at)
         VALUES (?, ?, ?, 'queued', ?, ?)`,
      ),
      move: db.prepare(
        `UPDATE jobs SET state = @to, updated_at = @at, failure_reason = @reason
         WHERE print_job_id = @id AND state = @from`,
      ),
      next: db.prepare<[string], JobRow>(
        `SELECT * FROM jobs WHERE printer_key = ? AND state = 'queued' ORDER BY created_at, print_job_id LIMIT 1`,
      ),
      queuedKeys: db.prepare<[], { printer_key: string }>(
        `SELECT DISTINCT printer_key FROM jobs WHERE state = 'queued'`,
      ),
      inState: db.prepare<[string], JobRow>('SELECT * FROM jobs WHERE state = ?'),
      enqueue: db.prepare('INSERT INTO outbox (topic, payload) VALUES (?, ?)'),
      outbox: db.prepare<[number], { seq: number; topic: OutboxTopic; payload: string }>(
        'SELECT * FROM outbox ORDER BY seq LIMIT ?',
      ),
      sent: db.prepare('DELETE FROM outbox WHERE seq = ?'),
      active: db.prepare<[], { offer: string }>(
        `SELECT offer FROM jobs WHERE state IN ('queued', 'printing')`,
      ),
      prune: db.prepare(
        `DELETE FROM jobs WHERE state IN ('printed', 'failed', 'cancelled') AND updated_at < ?`,
      ),
    }
  }

  /**
   * Takes an offer. A new job is queued and acknowledged; a repeated offer of a job the hub already has is
   * acknowledged again (and, if it already finished, its final status is sent again: the cloud evidently
   * missed it). Returns whether the job was new.
   */
  readonly accept = (offer: JobOffer, now = new Date()): boolean =>
    this.#db
      .transaction(() => {
        const at = now.toISOString()
        const known = this.#s.find.get(offer.print_job_id)
        if (!known) {
          this.#s.insert.run(
            offer.print_job_id,
            offer.printer_key,
            JSON.stringify(offer),
            offer.created_at,
            at,
          )
        }
        const state = known?.state ?? 'queued'
        if (state === 'queued' || state === 'printing') {
          this.#push('job-ack', { v: PROTOCOL_VERSION, print_job_id: offer.print_job_id, at })
        }
        if (state === 'printed' || state === 'failed') {
          this.#push('job-status', {
            v: PROTOCOL_VERSION,
            print_job_id: offer.print_job_id,
            status: state,
            at: at,
            ...(known?.failure_reason && { failure_reason: known.failure_reason as FailureReason }),
          })
        }
        return !known
      })
      .immediate()

  find(printJobId: string): SpooledJob | undefined {
    const row = this.#s.find.get(printJobId)
    return row && toJob(row)
  }

  /** The oldest queued job of a printer (creation order). */
  next(printerKey: string): SpooledJob | undefined {
    const row = this.#s.next.get(printerKey)
    return row && toJob(row)
  }

  printerKeysWithWork(): string[] {
    return this.#s.queuedKeys.all().map((r) => r.printer_key)
  }

  /** queued → printing, durably, with the `printing` report queued. False if it is no longer queued. */
  readonly startPrinting = (printJobId: string, now = new Date()): boolean =>
    this.#move(printJobId, 'queued', 'printing', now, { status: 'printing' })

  readonly finish = (printJobId: string, now = new Date()): boolean =>
    this.#move(printJobId, 'printing', 'printed', now, { status: 'printed' })

  /** A job fails from `queued` (never sent) or `printing` (bytes may have reached the printer). */
  readonly fail = (
    printJobId: string,
    from: 'queued' | 'printing',
    reason: FailureReason,
    detail?: string,
    now = new Date(),
  ) =>
    this.#move(printJobId, from, 'failed', now, {
      status: 'failed',
      failure_reason: reason,
      ...(detail !== undefined && { detail: detail.slice(0, 500) }),
    })

  /** The cloud cancelled it: drop it if it has not started. */
  cancel(printJobId: string, now = new Date()): boolean {
    return (
      this.#s.move.run({
        id: printJobId,
        from: 'queued',
        to: 'cancelled',
        at: now.toISOString(),
        reason: null,
      }).changes === 1
    )
  }

  /** At start-up: a job left `printing` by a crash may have reached paper; fail it, never reprint it. */
  recoverInterrupted(now = new Date()): string[] {
    const interrupted = this.#s.inState.all('printing').map((r) => r.print_job_id)
    for (const id of interrupted)
      this.fail(id, 'printing', 'interrupted', 'the hub stopped while printing', now)
    return interrupted
  }

  outbox(limit = 100): OutboxMessage[] {
    return this.#s.outbox
      .all(limit)
      .map((r) => ({ seq: r.seq, topic: r.topic, payload: JSON.parse(r.payload) }))
  }

  /** The broker acknowledged the message (PUBACK): it need not be sent again. */
  delivered(seq: number): void {
    this.#s.sent.run(seq)
  }

  /** SHA-256 of the documents that queued or printing jobs still need. */
  documentsInUse(): Set<string> {
    return new Set(this.#s.active.all().map((r) => (JSON.parse(r.offer) as JobOffer).document.sha256))
  }

  /** Forgets finished jobs older than `before`. */
  prune(before: Date): number {
    return this.#s.prune.run(before.toISOString()).changes
  }

  close(): void {
    this.#db.close()
  }

  #push<T extends OutboxTopic>(topic: T, payload: HubPayload<T>): void {
    this.#s.enqueue.run(topic, JSON.stringify(payload))
  }

  #move(
    id: string,
    from: SpoolState,
    to: SpoolState,
    now: Date,
    report: Omit<HubPayload<'job-status'>, 'v' | 'print_job_id' | 'at'>,
  ): boolean {
    return this.#db
      .transaction(() => {
        const at = now.toISOString()
        const reason = report.status === 'failed' ? (report.failure_reason ?? null) : null
        if (this.#s.move.run({ id, from, to, at, reason }).changes !== 1) return false
        this.#push('job-status', { v: PROTOCOL_VERSION, print_job_id: id, at, ...report })
        return true
      })
      .immediate()
  }
}
