import { affected, inTransaction, type Sql } from './engine.ts'

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
  ): Promise<IdempotencyBegin>
  complete(scope: IdempotencyScope, statusCode: number, body: string): Promise<void>
  /** The request holding the claim is alive: it keeps the claim until `lockedUntil`. */
  renew(scope: IdempotencyScope, lockedUntil: number): Promise<void>
  /** Drops an unfinished claim so that a retry runs the request again (used when the request failed). */
  release(scope: IdempotencyScope): Promise<void>
  /** Purges records past their expiry (housekeeping); returns how many. */
  deleteExpired(now: number): Promise<number>
}

export function createIdempotencyRepository(sql: Sql): IdempotencyRepository {
  const { db } = sql
  const purge = (on: Sql, now: number) =>
    on.db.deleteFrom('idempotency_keys').where('expires_at', '<=', now).executeTakeFirst()
  return {
    begin: (s, fingerprint, now, lockMs, ttlMs) =>
      inTransaction(sql, async (tx): Promise<IdempotencyBegin> => {
        await purge(tx, now)
        // One statement: a new key is claimed; a claim whose holder died (past locked_until) is taken over.
        const claimed = await tx.db
          .insertInto('idempotency_keys')
          .values({
            account_id: s.accountId,
            endpoint: s.endpoint,
            key: s.key,
            fingerprint,
            state: 'in_progress',
            locked_until: now + lockMs,
            expires_at: now + ttlMs,
          })
          .onConflict((conflict) =>
            conflict
              .columns(['account_id', 'endpoint', 'key'])
              .doUpdateSet({ locked_until: (eb) => eb.ref('excluded.locked_until') })
              .where('idempotency_keys.state', '=', 'in_progress')
              .where('idempotency_keys.locked_until', '<=', now)
              .whereRef('idempotency_keys.fingerprint', '=', 'excluded.fingerprint'),
          )
          .executeTakeFirst()
        if (Number(claimed.numInsertedOrUpdatedRows ?? 0) === 1) return { outcome: 'started' }
        const row = await tx.db
          .selectFrom('idempotency_keys')
          .select(['fingerprint', 'state', 'status_code', 'response_body'])
          .where('account_id', '=', s.accountId)
          .where('endpoint', '=', s.endpoint)
          .where('key', '=', s.key)
          .executeTakeFirst()
        if (!row) return { outcome: 'in_progress' }
        if (row.fingerprint !== fingerprint) return { outcome: 'conflict' }
        if (row.state === 'completed') {
          return { outcome: 'completed', statusCode: row.status_code ?? 200, body: row.response_body ?? '' }
        }
        return { outcome: 'in_progress' }
      }),
    async complete(s, statusCode, body) {
      await db
        .updateTable('idempotency_keys')
        .set({ state: 'completed', status_code: statusCode, response_body: body })
        .where('account_id', '=', s.accountId)
        .where('endpoint', '=', s.endpoint)
        .where('key', '=', s.key)
        .execute()
    },
    async renew(s, lockedUntil) {
      await db
        .updateTable('idempotency_keys')
        .set({ locked_until: lockedUntil })
        .where('account_id', '=', s.accountId)
        .where('endpoint', '=', s.endpoint)
        .where('key', '=', s.key)
        .where('state', '=', 'in_progress')
        .execute()
    },
    async release(s) {
      await db
        .deleteFrom('idempotency_keys')
        .where('account_id', '=', s.accountId)
        .where('endpoint', '=', s.endpoint)
        .where('key', '=', s.key)
        .where('state', '=', 'in_progress')
        .execute()
    },
    deleteExpired: async (now) => affected(await purge(sql, now)),
  }
}
