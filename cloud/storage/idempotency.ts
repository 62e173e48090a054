import type { SqliteDatabase } from './database.ts'

export type IdempotencyBegin =
  | { outcome: 'started' }
  | { outcome: 'conflict' }
  | { outcome: 'in_progress' }
  | { outcome: 'completed'; statusCode: number; body: string }

export interface IdempotencyScope {
  accountId: string
  endpoint: string
  key: string
}

export interface IdempotencyRepository {
  /**
   * Claims the key for a request with this fingerprint, or reports what already holds it. A claim whose
   * holder died (past `lockedUntil`) is taken over. Expired records are purged first.
   */
  begin(
    scope: IdempotencyScope,
    fingerprint: string,
    now: number,
    lockMs: number,
    ttlMs: number,
  ): IdempotencyBegin
  complete(scope: IdempotencyScope, statusCode: number, body: string): void
  /** The request holding the claim is alive: it keeps the claim until `lockedUntil`. */
  renew(scope: IdempotencyScope, lockedUntil: number): void
  /** Drops an unfinished claim so that a retry runs the request again (used when the request failed). */
  release(scope: IdempotencyScope): void
  /** Purges records past their expiry (housekeeping); returns how many. */
  deleteExpired(now: number): number
}

interface KeyRow {
  fingerprint: string
  state: 'in_progress' | 'completed'
  status_code: number | null
  response_body: string | null
  locked_until: number
}

export function createIdempotencyRepository(db: SqliteDatabase): IdempotencyRepository {
  const purge = db.prepare('DELETE FROM idempotency_keys WHERE expires_at <= ?')
  const find = db.prepare<[string, string, string], KeyRow>(
    'SELECT * FROM idempotency_keys WHERE account_id = ? AND endpoint = ? AND key = ?',
  )
  const claim = db.prepare(
    `INSERT INTO idempotency_keys (account_id, endpoint, key, fingerprint, state, locked_until, expires_at)
     VALUES (?, ?, ?, ?, 'in_progress', ?, ?)
     ON CONFLICT (account_id, endpoint, key) DO UPDATE SET locked_until = excluded.locked_until
     WHERE idempotency_keys.state = 'in_progress' AND idempotency_keys.locked_until <= ?
       AND idempotency_keys.fingerprint = excluded.fingerprint`,
  )
  const complete = db.prepare(
    `UPDATE idempotency_keys SET state = 'completed', status_code = ?, response_body = ?
     WHERE account_id = ? AND endpoint = ? AND key = ?`,
  )
  const renew = db.prepare(
    `UPDATE idempotency_keys SET locked_until = ?
     WHERE account_id = ? AND endpoint = ? AND key = ? AND state = 'in_progress'`,
  )
  const release = db.prepare(
    `DELETE FROM idempotency_keys WHERE account_id = ? AND endpoint = ? AND key = ? AND state = 'in_progress'`,
  )
  const begin = db.transaction(
    (
      s: IdempotencyScope,
      fingerprint: string,
      now: number,
      lockMs: number,
      ttlMs: number,
    ): IdempotencyBegin => {
      purge.run(now)
      const claimed = claim.run(s.accountId, s.endpoint, s.key, fingerprint, now + lockMs, now + ttlMs, now)
      if (claimed.changes === 1) return { outcome: 'started' }
      const row = find.get(s.accountId, s.endpoint, s.key)
      if (!row) return { outcome: 'in_progress' }
      if (row.fingerprint !== fingerprint) return { outcome: 'conflict' }
      if (row.state === 'completed') {
        return { outcome: 'completed', statusCode: row.status_code ?? 200, body: row.response_body ?? '' }
      }
      return { outcome: 'in_progress' }
    },
  )
  return {
    begin: (s, fingerprint, now, lockMs, ttlMs) => begin.immediate(s, fingerprint, now, lockMs, ttlMs),
    complete(s, statusCode, body) {
      complete.run(statusCode, body, s.accountId, s.endpoint, s.key)
    },
    renew(s, lockedUntil) {
      renew.run(lockedUntil, s.accountId, s.endpoint, s.key)
    },
    release(s) {
      release.run(s.accountId, s.endpoint, s.key)
    },
    deleteExpired: (now) => purge.run(now).changes,
  }
}
