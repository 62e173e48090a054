import type { SessionStore } from '@fastify/session'
import type { Session } from 'fastify'
import { hashSecret } from '../../print-api/secrets.ts'
import type { ConsoleSessionRepository } from '../storage/console-sessions.ts'

declare module 'fastify' {
  interface Session {
    /** Set at sign-in (session-support.ts). */
    userId?: string
    /** Epoch milliseconds of the sign-in (absolute expiry). */
    signedInAt?: number
    /** Epoch milliseconds of the last request that counted as activity (idle expiry). */
    lastSeenAt?: number
    /**
     * After a password that is right for users of several accounts (one e-mail, one user per account): their
     * ids until the person picks one, where to go then, and when the password was checked (sign-in-pages.ts).
     */
    accountChoice?: { userIds: string[]; next: string; checkedAt: number }
  }
}

/**
 * @fastify/session's store on our database (both engines), so that every cloud node sees a session made by
 * another. The id is looked up by its SHA-256 digest: the table holds no id a reader could present as a
 * cookie. A row lives until the idle expiry after its last save; session-support.ts applies both expiries.
 */
export class DatabaseSessionStore implements SessionStore {
  constructor(
    private readonly sessions: ConsoleSessionRepository,
    private readonly now: () => number,
    private readonly idleMs: number,
  ) {}

  get(sessionId: string, callback: (error: unknown, session?: Session | null) => void): void {
    this.sessions.get(hashSecret(sessionId), this.now()).then(
      (data) => callback(null, data === undefined ? null : (JSON.parse(data) as Session)),
      (error: unknown) => callback(error),
    )
  }

  set(sessionId: string, session: Session, callback: (error?: unknown) => void): void {
    const expiresAt = (session.lastSeenAt ?? this.now()) + this.idleMs
    this.sessions
      .set(hashSecret(sessionId), session.userId ?? null, JSON.stringify(session), expiresAt)
      .then(() => callback(), callback)
  }

  destroy(sessionId: string, callback: (error?: unknown) => void): void {
    this.sessions.destroy(hashSecret(sessionId)).then(() => callback(), callback)
  }
}
