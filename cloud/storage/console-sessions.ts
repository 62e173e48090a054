import type { Sql } from './engine.ts'

/**
 * The console's sessions in the database, so that every cloud node on it sees the same ones
 * (cloud/console/session-store.ts adapts this to @fastify/session). Ids are kept only as SHA-256 digests.
 */
export interface ConsoleSessionRepository {
  /** The session's data (JSON) unless it is unknown or past `expires_at`. */
  get(sessionHash: Buffer, now: number): Promise<string | undefined>
  set(sessionHash: Buffer, userId: string | null, data: string, expiresAt: number): Promise<void>
  destroy(sessionHash: Buffer): Promise<void>
  /** Removes sessions past their expiry. */
  purgeExpired(now: number): Promise<number>
}

export function createConsoleSessionRepository({ db }: Sql): ConsoleSessionRepository {
  return {
    async get(sessionHash, now) {
      const row = await db
        .selectFrom('console_sessions')
        .select('data')
        .where('session_hash', '=', sessionHash)
        .where('expires_at', '>', now)
        .executeTakeFirst()
      return row?.data
    },
    async set(sessionHash, userId, data, expiresAt) {
      await db
        .insertInto('console_sessions')
        .values({ session_hash: sessionHash, user_id: userId, data, expires_at: expiresAt })
        .onConflict((conflict) =>
          conflict.column('session_hash').doUpdateSet({ user_id: userId, data, expires_at: expiresAt }),
        )
        .execute()
    },
    async destroy(sessionHash) {
      await db.deleteFrom('console_sessions').where('session_hash', '=', sessionHash).execute()
    },
    async purgeExpired(now) {
      const result = await db.deleteFrom('console_sessions').where('expires_at', '<=', now).executeTakeFirst()
      return Number(result.numDeletedRows)
    },
  }
}
