import { sql as rawSql } from 'kysely'
import type { Sql } from './engine.ts'

/** A counter's failures in its current window and when that window began (epoch milliseconds). */
export interface FailureCount {
  failures: number
  windowStartedAt: number
}

/**
 * Failed console sign-ins counted per key (`ip:…`, `email:…`) in fixed windows, in the database so that every
 * cloud node counts together (cloud/console/sign-in-throttle.ts decides what the counts mean).
 */
export interface SignInFailureRepository {
  /** The keys' counts in windows that began after `now - windowMs` (a key with none is absent). */
  current(keys: string[], now: number, windowMs: number): Promise<Map<string, FailureCount>>
  /** Counts one failure, in a new window when the key's last one has ended; the count after it. */
  record(key: string, now: number, windowMs: number): Promise<FailureCount>
  clear(key: string): Promise<void>
  /** Removes counters whose window has ended. */
  purgeEnded(now: number, windowMs: number): Promise<void>
}

export function createSignInFailureRepository({ db }: Sql): SignInFailureRepository {
  return {
    async current(keys, now, windowMs) {
      if (keys.length === 0) return new Map()
      const rows = await db
        .selectFrom('sign_in_failures')
        .selectAll()
        .where('counter_key', 'in', keys)
        .where('window_started_at', '>', now - windowMs)
        .execute()
      return new Map(
        rows.map((r) => [r.counter_key, { failures: r.failures, windowStartedAt: r.window_started_at }]),
      )
    },
    async record(key, now, windowMs) {
      const ended = rawSql<boolean>`sign_in_failures.window_started_at <= ${now - windowMs}`
      const row = await db
        .insertInto('sign_in_failures')
        .values({ counter_key: key, failures: 1, window_started_at: now })
        .onConflict((conflict) =>
          conflict.column('counter_key').doUpdateSet({
            failures: rawSql<number>`CASE WHEN ${ended} THEN 1 ELSE sign_in_failures.failures + 1 END`,
            window_started_at: rawSql<number>`CASE WHEN ${ended} THEN ${now} ELSE sign_in_failures.window_started_at END`,
          }),
        )
        .returning(['failures', 'window_started_at'])
        .executeTakeFirstOrThrow()
      return { failures: row.failures, windowStartedAt: row.window_started_at }
    },
    async clear(key) {
      await db.deleteFrom('sign_in_failures').where('counter_key', '=', key).execute()
    },
    async purgeEnded(now, windowMs) {
      await db
        .deleteFrom('sign_in_failures')
        .where('window_started_at', '<=', now - windowMs)
        .execute()
    },
  }
}
