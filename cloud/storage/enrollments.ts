import { randomUUID } from 'node:crypto'
import type { EnrollmentState } from '../../protocol/agent-api.ts'
import type { PageOf } from '../../protocol/pagination.ts'
import { affected, forUpdate, inTransaction, type Sql } from './engine.ts'
import { pageAfter } from './paging.ts'

export interface Enrollment {
  enrollment_id: string
  account_id: string
  name: string
  state: EnrollmentState
  created_at: string
  expires_at: string
  claimed_at: string | null
  revoked_at: string | null
  agent_id: string | null
}

export type ClaimOutcome =
  | { outcome: 'claimed'; enrollment: Enrollment; agentId: string }
  | { outcome: 'unknown' | 'expired' | 'revoked' | 'already_claimed' }

/** The hosted onboarding link of an enrollment (issue 10): its single-use token, hashed, and where it returns. */
export interface OnboardingLink {
  hash: Buffer
  returnUri: string
  state: string
}

export interface EnrollmentRepository {
  create(
    accountId: string,
    name: string,
    tokenHash: Buffer,
    expiresAt: Date,
    onboarding?: OnboardingLink,
  ): Promise<Enrollment>
  /** The account's enrollments, newest first; `cursor` is the last id of the previous page (unknown → undefined). */
  list(accountId: string, limit: number, cursor?: string): Promise<PageOf<Enrollment> | undefined>
  /** The account's enrollments still pending at `now` (not claimed, revoked or expired), newest first. */
  listPending(accountId: string, now: Date): Promise<Enrollment[]>
  findById(enrollmentId: string): Promise<Enrollment | undefined>
  /**
   * Claims the enrollment with this token hash: pending → claimed, creating its agent with the credential
   * hash, in one transaction; a second claim of the same token finds it claimed.
   */
  claim(tokenHash: Buffer, credentialHash: Buffer, hostname: string, now: Date): Promise<ClaimOutcome>
  revoke(enrollmentId: string, now: Date): Promise<boolean>
}

/**
 * Claims a pending enrollment inside the caller's transaction (the row locked by the caller): creates its agent
 * with the credential hash and marks it claimed, and its onboarding link used when a pairing claims it.
 */
export async function claimPending(
  tx: Sql,
  enrollment: Enrollment,
  credentialHash: Buffer,
  hostname: string,
  now: Date,
  options: { onboardingUsed?: boolean } = {},
): Promise<Extract<ClaimOutcome, { outcome: 'claimed' }>> {
  const agentId = randomUUID()
  const at = now.toISOString()
  await tx.db
    .insertInto('agents')
    .values({
      agent_id: agentId,
      account_id: enrollment.account_id,
      name: enrollment.name,
      online: 0,
      credential_hash: credentialHash,
      hostname,
      created_at: at,
    })
    .execute()
  await tx.db
    .updateTable('enrollments')
    .set({
      state: 'claimed',
      claimed_at: at,
      agent_id: agentId,
      ...(options.onboardingUsed && { onboarding_used_at: at }),
    })
    .where('enrollment_id', '=', enrollment.enrollment_id)
    .where('state', '=', 'pending')
    .execute()
  return {
    outcome: 'claimed',
    agentId,
    enrollment: { ...enrollment, state: 'claimed', claimed_at: at, agent_id: agentId },
  }
}

interface Row extends Omit<Enrollment, 'state'> {
  state: 'pending' | 'claimed' | 'revoked'
}

/** `expired` is derived: a pending enrollment past its expiry (no timer needs to flip it). */
export function toEnrollment(row: Row, now: Date): Enrollment {
  const expired = row.state === 'pending' && Date.parse(row.expires_at) <= now.getTime()
  return { ...row, state: expired ? 'expired' : row.state }
}

export const ENROLLMENT_COLUMNS = [
  'enrollment_id',
  'account_id',
  'name',
  'state',
  'created_at',
  'expires_at',
  'claimed_at',
  'revoked_at',
  'agent_id',
] as const

export function createEnrollmentRepository(sql: Sql): EnrollmentRepository {
  const { db } = sql
  const columns = ENROLLMENT_COLUMNS
  return {
    async create(accountId, name, tokenHash, expiresAt, onboarding) {
      const enrollment: Enrollment = {
        enrollment_id: randomUUID(),
        account_id: accountId,
        name,
        state: 'pending',
        created_at: new Date().toISOString(),
        expires_at: expiresAt.toISOString(),
        claimed_at: null,
        revoked_at: null,
        agent_id: null,
      }
      await db
        .insertInto('enrollments')
        .values({
          enrollment_id: enrollment.enrollment_id,
          account_id: accountId,
          name,
          token_hash: tokenHash,
          state: 'pending',
          created_at: enrollment.created_at,
          expires_at: enrollment.expires_at,
          ...(onboarding && {
            onboarding_hash: onboarding.hash,
            return_uri: onboarding.returnUri,
            return_state: onboarding.state,
          }),
        })
        .execute()
      return enrollment
    },
    list(accountId, limit, cursor) {
      const now = new Date()
      return pageAfter(db, {
        list: { table: 'enrollments', id: 'enrollment_id', scope: { account_id: accountId } },
        cursor,
        limit,
        fetch: (seq) =>
          db
            .selectFrom('enrollments')
            .select(columns)
            .where('account_id', '=', accountId)
            .where('seq', '<', seq)
            .orderBy('seq', 'desc')
            .limit(limit + 1)
            .execute(),
        map: (row) => toEnrollment(row, now),
        idOf: (enrollment) => enrollment.enrollment_id,
      })
    },
    async listPending(accountId, now) {
      const rows = await db
        .selectFrom('enrollments')
        .select(columns)
        .where('account_id', '=', accountId)
        .where('state', '=', 'pending')
        .where('expires_at', '>', now.toISOString())
        .orderBy('seq', 'desc')
        .execute()
      return rows.map((row) => toEnrollment(row, now))
    },
    async findById(enrollmentId) {
      const row = await db
        .selectFrom('enrollments')
        .select(columns)
        .where('enrollment_id', '=', enrollmentId)
        .executeTakeFirst()
      return row && toEnrollment(row, new Date())
    },
    claim: (tokenHash, credentialHash, hostname, now) =>
      inTransaction(sql, async (tx): Promise<ClaimOutcome> => {
        // Locked on PostgreSQL: a second claim of the token waits, then finds it claimed.
        const row = await forUpdate(
          tx,
          tx.db.selectFrom('enrollments').select(columns).where('token_hash', '=', tokenHash),
        ).executeTakeFirst()
        if (!row) return { outcome: 'unknown' }
        const enrollment = toEnrollment(row, now)
        if (enrollment.state === 'claimed') return { outcome: 'already_claimed' }
        if (enrollment.state !== 'pending') return { outcome: enrollment.state }
        return claimPending(tx, enrollment, credentialHash, hostname, now)
      }),
    revoke: async (enrollmentId, now) =>
      affected(
        await db
          .updateTable('enrollments')
          .set({ state: 'revoked', revoked_at: now.toISOString() })
          .where('enrollment_id', '=', enrollmentId)
          .where('state', '=', 'pending')
          .executeTakeFirst(),
      ) === 1,
  }
}
