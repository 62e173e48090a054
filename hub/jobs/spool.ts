import Database from 'better-sqlite3'
import type { FailureReason, HubPayload, JobOffer, LanJob } from '../../protocol/hub-messages.ts'
import { PROTOCOL_VERSION } from '../../protocol/hub-messages.ts'
import type { WaitingReason } from '../../protocol/print-job.ts'
import { migrateSpool, SPOOL_MIGRATIONS, type SpoolMigration, type SpoolVersion } from './spool-migrations.ts'

/**
 * The hub's spool (docs/architecture.md: what keeps it safe): every job offer and every message for the cloud is in
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
  /** Where the job was taken: offered by the cloud, or on the hub's LAN API (docs/lan-printing.md). */
  origin: 'cloud' | 'lan'
  /** What the cloud is told of a LAN job besides its offer; null for a cloud job. */
  lan: LanJobFacts | null
  /** When the hub took it (null: taken by a release before these were kept), started and ended it. */
  taken_at: string | null
  started_at: string | null
  completed_at: string | null
  failure_reason: string | null
  failure_detail: string | null
  /** For a cloud offer dropped because its request printed on the LAN: that LAN job's id. */
  duplicate_of: string | null
}

/**
 * What the cloud is told of a LAN job besides its offer: who sent it, the document's MIME type and name, and
 * the options as asked (a RAW job's offer carries the rendering options' defaults, as the cloud's offers do).
 */
export type LanJobFacts = Pick<LanJob, 'client_id' | 'options'> &
  Pick<LanJob['document'], 'mime_type' | 'filename'>

/** A document uploaded to the LAN API (POST /api/v1/documents), its bytes in the hub's documents directory. */
export interface LanDocument {
  document_id: string
  sha256: string
  size_bytes: number
  format: LanJob['document']['format']
  raw_language: LanJob['document']['raw_language']
  mime_type: string
  filename: string | null
  created_at: string
}

/**
 * What became of a job asked for on the LAN: taken (`created`), or the job its Idempotency-Key already names,
 * taken on the LAN or offered by the cloud (`replayed`, the same request), or refused (`conflict`: the key was
 * used with another request).
 */
export type LanAcceptance =
  | { outcome: 'created' | 'replayed'; job: SpooledJob }
  | { outcome: 'conflict'; job: SpooledJob }

/** Why the cloud asked the hub to drop a job (protocol: `cancel_job`). */
export type DropReason = 'cancelled' | 'expired'

export type OutboxTopic = 'job-ack' | 'job-status' | 'job-waiting' | 'lan-job'
export interface OutboxMessage<T extends OutboxTopic = OutboxTopic> {
  seq: number
  topic: T
  payload: HubPayload<T>
}

interface JobRow {
  print_job_id: string
  printer_key: string
  offer: string
  state: SpoolState
  failure_reason: string | null
  origin: 'cloud' | 'lan'
  lan: string | null
  duplicate_of: string | null
  taken_at: string | null
  started_at: string | null
  completed_at: string | null
  failure_detail: string | null
}

interface KeyRow {
  fingerprint: string
  print_job_id: string
}

const dropReport = (reason: DropReason) =>
  reason === 'expired'
    ? ({ status: 'failed', failure_reason: 'expired' } as const)
    : ({ status: 'cancelled' } as const)

const toJob = (row: JobRow): SpooledJob => ({
  print_job_id: row.print_job_id,
  printer_key: row.printer_key,
  offer: JSON.parse(row.offer) as JobOffer,
  state: row.state,
  origin: row.origin,
  lan: row.lan === null ? null : (JSON.parse(row.lan) as LanJobFacts),
  taken_at: row.taken_at,
  started_at: row.started_at,
  completed_at: row.completed_at,
  failure_reason: row.failure_reason,
  failure_detail: row.failure_detail,
  duplicate_of: row.duplicate_of,
})

/** The status the cloud shows for a spool state: a job in the spool is `reserved` until it starts. */
const LAN_STATUS: Record<SpoolState, LanJob['status']> = {
  queued: 'reserved',
  printing: 'printing',
  printed: 'printed',
  failed: 'failed',
  cancelled: 'cancelled',
}

export class Spool {
  readonly #db: Database.Database
  readonly #s
  readonly #outboxListeners = new Set<() => void>()
  /** A message went into the outbox in the write under way; its listeners are told once it is committed. */
  #outboxGained = false
  /** The schema version found and reached when the spool was opened (spool-migrations.ts). */
  readonly version: SpoolVersion

  /** `migrations`: the list to apply (tests pass another release's list); this release's by default. */
  constructor(file: string, migrations: readonly SpoolMigration[] = SPOOL_MIGRATIONS) {
    this.#db = new Database(file)
    this.#db.pragma('journal_mode = WAL')
    // FULL: a state change acknowledged to the cloud survives a power cut of the Pi.
    this.#db.pragma('synchronous = FULL')
    this.version = migrateSpool(this.#db, migrations)
    const db = this.#db
    this.#s = {
      find: db.prepare<[string], JobRow>('SELECT * FROM jobs WHERE print_job_id = ?'),
      insert: db.prepare(
        `INSERT INTO jobs (print_job_id, printer_key, offer, state, created_at, updated_at, failure_reason,
           origin, lan, duplicate_of, taken_at, completed_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      ),
      keyFind: db.prepare<[string, string], KeyRow>(
        'SELECT fingerprint, print_job_id FROM idempotency WHERE endpoint = ? AND key = ?',
      ),
      keyInsert: db.prepare(
        'INSERT INTO idempotency (endpoint, key, fingerprint, print_job_id, at) VALUES (?, ?, ?, ?, ?)',
      ),
      keyPrune: db.prepare(
        'DELETE FROM idempotency WHERE at < ? AND print_job_id NOT IN (SELECT print_job_id FROM jobs)',
      ),
      droppedFind: db.prepare<[string], { reason: DropReason }>(
        'SELECT reason FROM dropped WHERE print_job_id = ?',
      ),
      droppedInsert: db.prepare('INSERT OR IGNORE INTO dropped (print_job_id, reason, at) VALUES (?, ?, ?)'),
      droppedPrune: db.prepare('DELETE FROM dropped WHERE at < ?'),
      move: db.prepare(
        `UPDATE jobs SET state = @to, updated_at = @at, failure_reason = @reason,
           failure_detail = COALESCE(@detail, failure_detail),
           started_at = CASE WHEN @to = 'printing' THEN @at ELSE started_at END,
           completed_at = CASE WHEN @to IN ('printed', 'failed', 'cancelled') THEN @at ELSE completed_at END
         WHERE print_job_id = @id AND state = @from`,
      ),
      documentInsert: db.prepare(
        `INSERT INTO documents (document_id, sha256, size_bytes, format, raw_language, mime_type, filename, created_at)
         VALUES (@document_id, @sha256, @size_bytes, @format, @raw_language, @mime_type, @filename, @created_at)`,
      ),
      documentFind: db.prepare<[string], LanDocument>('SELECT * FROM documents WHERE document_id = ?'),
      documentsRecent: db.prepare<[], { sha256: string }>('SELECT sha256 FROM documents'),
      documentsPrune: db.prepare('DELETE FROM documents WHERE created_at < ?'),
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
   * missed it). A job the cloud asked the hub to drop before its offer arrived is never queued: it is
   * recorded as dropped and reported so. Returns whether the job was new.
   */
  readonly accept = (offer: JobOffer, now = new Date()): boolean =>
    this.#write(() => {
      const at = now.toISOString()
      let known = this.#s.find.get(offer.print_job_id)
      const isNew = !known
      if (!known) {
        const dropped = this.#s.droppedFind.get(offer.print_job_id)
        const duplicateOf = dropped ? undefined : this.#takenOnLan(offer, at)
        const state: SpoolState =
          duplicateOf !== undefined
            ? 'cancelled'
            : !dropped
              ? 'queued'
              : dropped.reason === 'expired'
                ? 'failed'
                : 'cancelled'
        const reason = dropped?.reason === 'expired' ? 'expired' : null
        this.#s.insert.run(
          offer.print_job_id,
          offer.printer_key,
          JSON.stringify(offer),
          state,
          offer.created_at,
          at,
          reason,
          'cloud',
          null,
          duplicateOf ?? null,
          at,
          state === 'queued' ? null : at,
        )
        known = this.#s.find.get(offer.print_job_id)!
      }
      if (known.state === 'queued' || known.state === 'printing') {
        this.#push('job-ack', { v: PROTOCOL_VERSION, print_job_id: offer.print_job_id, at })
      } else {
        this.#pushFinal(known, at)
      }
      return isNew
    })

  /**
   * Takes a job asked for on the LAN API (docs/lan-printing.md): its offer is made by the hub (the document is
   * already in the hub's documents directory). With an Idempotency-Key, a key already taken on either path
   * answers its job (the same request) or a conflict (another request), and nothing is queued; otherwise the
   * job is queued and the cloud told of it (`lan-job`), in one transaction.
   */
  readonly acceptLan = (offer: JobOffer, facts: LanJobFacts, now = new Date()): LanAcceptance =>
    this.#write((): LanAcceptance => {
      const at = now.toISOString()
      const key = offer.idempotency
      const held = key && this.#s.keyFind.get(key.endpoint, key.key)
      if (held) {
        const job = this.#s.find.get(held.print_job_id)
        if (job)
          return { outcome: held.fingerprint === key.fingerprint ? 'replayed' : 'conflict', job: toJob(job) }
      }
      this.#s.insert.run(
        offer.print_job_id,
        offer.printer_key,
        JSON.stringify(offer),
        'queued',
        offer.created_at,
        at,
        null,
        'lan',
        JSON.stringify(facts),
        null,
        at,
        null,
      )
      if (key) this.#s.keyInsert.run(key.endpoint, key.key, key.fingerprint, offer.print_job_id, at)
      const row = this.#s.find.get(offer.print_job_id)!
      this.#pushLan(row, at)
      return { outcome: 'created', job: toJob(row) }
    })

  /** The job an Idempotency-Key names on this hub (taken on the LAN, or offered by the cloud with it), if any. */
  findByKey(endpoint: string, key: string): { job: SpooledJob; fingerprint: string } | undefined {
    const held = this.#s.keyFind.get(endpoint, key)
    const job = held && this.#s.find.get(held.print_job_id)
    return held && job ? { job: toJob(job), fingerprint: held.fingerprint } : undefined
  }

  /**
   * A cancel asked on the LAN API: a queued job is dropped (none of it reaches the printer) and the cloud told,
   * as a LAN job's whole snapshot or, for a job the cloud offered, as `cancelled` unasked (`on_lan`). Answers
   * the job's state afterwards, or undefined for a job the hub does not hold.
   */
  readonly cancelOnLan = (printJobId: string, now = new Date()): SpoolState | undefined =>
    this.#write((): SpoolState | undefined => {
      const at = now.toISOString()
      const known = this.#s.find.get(printJobId)
      if (!known) return undefined
      if (known.state !== 'queued') return known.state
      this.#s.move.run({ id: printJobId, from: 'queued', to: 'cancelled', at, reason: null, detail: null })
      if (known.origin === 'lan') this.#pushLan(this.#s.find.get(printJobId)!, at)
      else
        this.#push('job-status', {
          v: PROTOCOL_VERSION,
          print_job_id: printJobId,
          status: 'cancelled',
          at,
          on_lan: true,
        })
      return 'cancelled'
    })

  /**
   * A cloud offer whose Idempotency-Key a LAN job took for the same request: that job's id (the offer is then
   * dropped, never printed). Otherwise the offer's key is recorded, so that the same request sent on the LAN
   * is answered with this job. A key taken for another request (a client's mistake on two paths at once) does
   * not stop the offer: the cloud took it and answered its client.
   */
  #takenOnLan(offer: JobOffer, at: string): string | undefined {
    const key = offer.idempotency
    if (!key) return undefined
    const held = this.#s.keyFind.get(key.endpoint, key.key)
    if (!held) {
      this.#s.keyInsert.run(key.endpoint, key.key, key.fingerprint, offer.print_job_id, at)
      return undefined
    }
    return held.print_job_id !== offer.print_job_id && held.fingerprint === key.fingerprint
      ? held.print_job_id
      : undefined
  }

  /**
   * The cloud asks to drop a job (protocol: `cancel_job`). A queued job is dropped: its bytes never reach the
   * printer. A job the hub has not received yet is remembered as dropped, so that a late offer is never
   * printed. Either way, and whatever the job's state, the answer to the cloud is its status now: dropped
   * (`cancelled`, or `failed` with `expired`), or `printing`, `printed`, `failed` when it had started.
   * Returns the state the job is in afterwards.
   */
  readonly drop = (printJobId: string, reason: DropReason, now = new Date()): SpoolState | 'unknown' =>
    this.#write((): SpoolState | 'unknown' => {
      const at = now.toISOString()
      const known = this.#s.find.get(printJobId)
      if (!known) {
        this.#s.droppedInsert.run(printJobId, reason, at)
        this.#push('job-status', {
          v: PROTOCOL_VERSION,
          print_job_id: printJobId,
          at,
          ...dropReport(reason),
        })
        return 'unknown'
      }
      if (known.state === 'queued') {
        const report = dropReport(reason)
        const reasonColumn = report.status === 'failed' ? report.failure_reason : null
        this.#s.move.run({
          id: printJobId,
          from: 'queued',
          to: report.status,
          at,
          reason: reasonColumn,
          detail: null,
        })
        if (known.origin === 'lan') this.#pushLan(this.#s.find.get(printJobId)!, at)
        else this.#push('job-status', { v: PROTOCOL_VERSION, print_job_id: printJobId, at, ...report })
        return report.status
      }
      if (known.origin === 'lan') this.#pushLan(known, at)
      else if (known.state === 'printing') {
        this.#push('job-status', { v: PROTOCOL_VERSION, print_job_id: printJobId, status: 'printing', at })
      } else {
        this.#pushFinal(known, at)
      }
      return known.state
    })

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

  /** Why a queued job is not printing yet, for the cloud (sent in order with its other reports). */
  waiting(printJobId: string, reason: WaitingReason, now = new Date()): boolean {
    return this.#write(() => {
      if (this.#s.find.get(printJobId)?.state !== 'queued') return false
      this.#push('job-waiting', {
        v: PROTOCOL_VERSION,
        print_job_id: printJobId,
        reason,
        at: now.toISOString(),
      })
      return true
    })
  }

  /** At start-up: a job left `printing` by a crash may have reached paper; fail it, never reprint it. */
  recoverInterrupted(now = new Date()): string[] {
    const interrupted = this.#s.inState.all('printing').map((r) => r.print_job_id)
    for (const id of interrupted)
      this.fail(id, 'printing', 'interrupted', 'the hub stopped while printing', now)
    return interrupted
  }

  /**
   * Calls `listener` after each committed write that added messages to the outbox (the outbox pump sends
   * them). Returns the function that stops the calls.
   */
  onOutbox(listener: () => void): () => void {
    this.#outboxListeners.add(listener)
    return () => this.#outboxListeners.delete(listener)
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
    return new Set([
      ...this.#s.active.all().map((r) => (JSON.parse(r.offer) as JobOffer).document.sha256),
      // Uploaded on the LAN and kept for a job that may still name them (pruned with old jobs).
      ...this.#s.documentsRecent.all().map((r) => r.sha256),
    ])
  }

  /** Keeps a document uploaded on the LAN (its bytes are already in the documents directory). */
  addDocument(document: LanDocument): void {
    this.#s.documentInsert.run(document)
  }

  findDocument(documentId: string): LanDocument | undefined {
    return this.#s.documentFind.get(documentId)
  }

  /** Forgets finished jobs, and drop requests for jobs never received, older than `before`. */
  prune(before: Date): number {
    this.#s.droppedPrune.run(before.toISOString())
    const pruned = this.#s.prune.run(before.toISOString()).changes
    this.#s.keyPrune.run(before.toISOString())
    this.#s.documentsPrune.run(before.toISOString())
    return pruned
  }

  close(): void {
    this.#db.close()
  }

  /** Sends a finished job's status again (the cloud asked about it, so it evidently missed it). */
  #pushFinal(job: JobRow, at: string): void {
    if (job.state !== 'printed' && job.state !== 'failed' && job.state !== 'cancelled') return
    if (job.origin === 'lan') {
      this.#pushLan(job, at)
      return
    }
    this.#push('job-status', {
      v: PROTOCOL_VERSION,
      print_job_id: job.print_job_id,
      status: job.state,
      at,
      ...(job.state === 'failed' &&
        job.failure_reason && { failure_reason: job.failure_reason as FailureReason }),
      ...(job.state === 'cancelled' && job.duplicate_of !== null && { duplicate_of: job.duplicate_of }),
    })
  }

  /** A LAN job as it is now, whole (protocol: `lan-job`). */
  #pushLan(job: JobRow, at: string): void {
    const offer = JSON.parse(job.offer) as JobOffer
    const facts = JSON.parse(job.lan ?? '{}') as LanJobFacts
    this.#push('lan-job', {
      v: PROTOCOL_VERSION,
      print_job_id: job.print_job_id,
      printer_id: offer.printer_id,
      document: {
        document_id: offer.document.document_id,
        sha256: offer.document.sha256,
        size_bytes: offer.document.size_bytes,
        format: offer.document.format,
        raw_language: offer.document.raw_language,
        mime_type: facts.mime_type,
        filename: facts.filename,
      },
      options: facts.options,
      created_at: offer.created_at,
      client_id: facts.client_id,
      ...(offer.idempotency && { idempotency: offer.idempotency }),
      status: LAN_STATUS[job.state],
      at,
      ...(job.state === 'failed' &&
        job.failure_reason && { failure_reason: job.failure_reason as FailureReason }),
      ...(job.state === 'failed' && job.failure_detail !== null && { detail: job.failure_detail }),
    })
  }

  #push<T extends OutboxTopic>(topic: T, payload: HubPayload<T>): void {
    this.#s.enqueue.run(topic, JSON.stringify(payload))
    this.#outboxGained = true
  }

  #move(
    id: string,
    from: SpoolState,
    to: SpoolState,
    now: Date,
    report: Omit<HubPayload<'job-status'>, 'v' | 'print_job_id' | 'at'>,
  ): boolean {
    return this.#write(() => {
      const at = now.toISOString()
      const reason = report.status === 'failed' ? (report.failure_reason ?? null) : null
      const detail = ('detail' in report && report.detail) || null
      if (this.#s.move.run({ id, from, to, at, reason, detail }).changes !== 1) return false
      const job = this.#s.find.get(id)!
      if (job.origin === 'lan') this.#pushLan(job, at)
      else this.#push('job-status', { v: PROTOCOL_VERSION, print_job_id: id, at, ...report })
      return true
    })
  }

  /**
   * One write transaction (BEGIN IMMEDIATE: one writer at a time). Once it is committed, and only then, the
   * outbox's listeners hear of the messages it added: a rolled-back message is never sent.
   */
  #write<T>(work: () => T): T {
    this.#outboxGained = false
    let result: T
    try {
      result = this.#db.transaction(work).immediate()
    } catch (error) {
      this.#outboxGained = false
      throw error
    }
    if (this.#outboxGained) {
      this.#outboxGained = false
      for (const listener of this.#outboxListeners) listener()
    }
    return result
  }
}
