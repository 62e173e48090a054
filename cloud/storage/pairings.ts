import { randomUUID } from 'node:crypto'
import { generateSecret, hashSecret } from '../../print-api/secrets.ts'
import { affected, forUpdate, inTransaction, type Sql } from './engine.ts'
import { claimPending, ENROLLMENT_COLUMNS, type Enrollment, toEnrollment } from './enrollments.ts'

/** A new pairing as the hub asked for it (codes already hashed). */
export interface NewPairing {
  deviceCodeHash: Buffer
  userCodeHash: Buffer
  hostname: string
  expiresAt: number
  intervalSeconds: number
}

/** RFC 8628 §3.5: what a poll of the token endpoint finds. */
export type PollOutcome =
  | { outcome: 'unknown' | 'expired' | 'pending' }
  | { outcome: 'slow_down'; intervalSeconds: number }
  | { outcome: 'paired'; agentId: string; accountId: string; name: string }

/** An enrollment's onboarding link as the hosted page sees it. */
export type LinkOutcome =
  | { outcome: 'unknown' }
  | { outcome: 'used' | 'expired'; link: OnboardingTarget }
  | { outcome: 'open'; link: OnboardingTarget; enrollment: Enrollment }

export interface OnboardingTarget {
  returnUri: string
  state: string
}

export type PairOutcome =
  | Exclude<LinkOutcome, { outcome: 'open' }>
  | { outcome: 'wrong_code'; link: OnboardingTarget; hubName: string; failuresLeft: number }
  | { outcome: 'paired'; link: OnboardingTarget; agentId: string; enrollment: Enrollment }

export interface PairingRepository {
  /** Stores a new pairing; false when its user code's hash is taken (the caller draws another code). */
  create(pairing: NewPairing, now: number): Promise<boolean>
  /**
   * The hub's poll: hands out the credential (its hash stored on the paired agent) once, counts the poll
   * against the interval (slow_down adds 5 s for every later poll: RFC 8628 §3.5).
   */
  poll(deviceCodeHash: Buffer, credentialHash: Buffer, now: number): Promise<PollOutcome>
  /** The onboarding link with this token hash: open while unused and its enrollment pending. */
  link(onboardingHash: Buffer, now: Date): Promise<LinkOutcome>
  /**
   * Pairs the hub whose user code this is with the link's enrollment: one transaction claims the enrollment
   * (its agent created as by an enrollment token), marks the link used and binds the pairing. A wrong code
   * counts against the link; after `maxFailures` the link is spent (`used`).
   */
  pair(onboardingHash: Buffer, userCodeHash: Buffer, now: Date, maxFailures: number): Promise<PairOutcome>
}

/** How long a pairing is kept past its expiry (its hub's poll still reads `expired_token`); then purged. */
const KEEP_EXPIRED_MS = 60 * 60 * 1000

export function createPairingRepository(sql: Sql): PairingRepository {
  const { db } = sql
  return {
    async create(pairing, now) {
      await db
        .deleteFrom('pairings')
        .where('expires_at', '<', now - KEEP_EXPIRED_MS)
        .execute()
      const inserted = await db
        .insertInto('pairings')
        .values({
          pairing_id: randomUUID(),
          device_code_hash: pairing.deviceCodeHash,
          user_code_hash: pairing.userCodeHash,
          hostname: pairing.hostname,
          created_at: new Date(now).toISOString(),
          expires_at: pairing.expiresAt,
          interval_seconds: pairing.intervalSeconds,
        })
        .onConflict((conflict) => conflict.doNothing())
        .executeTakeFirst()
      return Number(inserted.numInsertedOrUpdatedRows ?? 0) === 1
    },

    poll: (deviceCodeHash, credentialHash, now) =>
      inTransaction(sql, async (tx): Promise<PollOutcome> => {
        const row = await forUpdate(
          tx,
          tx.db.selectFrom('pairings').selectAll().where('device_code_hash', '=', deviceCodeHash),
        ).executeTakeFirst()
        if (!row || row.delivered_at !== null) return { outcome: 'unknown' }
        if (row.agent_id !== null && row.enrollment_id !== null) {
          const agent = await tx.db
            .selectFrom('agents')
            .select(['account_id', 'name'])
            .where('agent_id', '=', row.agent_id)
            .executeTakeFirstOrThrow()
          await tx.db
            .updateTable('agents')
            .set({ credential_hash: credentialHash })
            .where('agent_id', '=', row.agent_id)
            .execute()
          await tx.db
            .updateTable('pairings')
            .set({ delivered_at: new Date(now).toISOString() })
            .where('pairing_id', '=', row.pairing_id)
            .execute()
          return { outcome: 'paired', agentId: row.agent_id, accountId: agent.account_id, name: agent.name }
        }
        if (row.expires_at <= now) return { outcome: 'expired' }
        const tooSoon = row.last_polled_at !== null && now - row.last_polled_at < row.interval_seconds * 1000
        const intervalSeconds = tooSoon ? row.interval_seconds + 5 : row.interval_seconds
        await tx.db
          .updateTable('pairings')
          .set({ last_polled_at: now, interval_seconds: intervalSeconds })
          .where('pairing_id', '=', row.pairing_id)
          .execute()
        return tooSoon ? { outcome: 'slow_down', intervalSeconds } : { outcome: 'pending' }
      }),

    link: (onboardingHash, now) => findLink(sql, onboardingHash, now, false),

    pair: (onboardingHash, userCodeHash, now, maxFailures) =>
      inTransaction(sql, async (tx): Promise<PairOutcome> => {
        const found = await findLink(tx, onboardingHash, now, true, maxFailures)
        if (found.outcome !== 'open') return found
        const pairing = await forUpdate(
          tx,
          tx.db
            .selectFrom('pairings')
            .select(['pairing_id', 'hostname'])
            .where('user_code_hash', '=', userCodeHash)
            .where('enrollment_id', 'is', null)
            .where('expires_at', '>', now.getTime()),
        ).executeTakeFirst()
        if (!pairing) {
          const failures = found.failures + 1
          await tx.db
            .updateTable('enrollments')
            .set({ pairing_failures: failures })
            .where('enrollment_id', '=', found.enrollment.enrollment_id)
            .execute()
          return {
            outcome: 'wrong_code',
            link: found.link,
            hubName: found.enrollment.name,
            failuresLeft: Math.max(0, maxFailures - failures),
          }
        }
        // The hub's real credential is drawn when it polls (poll above); until then the agent's hash matches
        // no credential anyone holds, so no secret is ever stored waiting for the hub.
        const unusable = hashSecret(generateSecret('hub'))
        const claimed = await claimPending(tx, found.enrollment, unusable, pairing.hostname, now, {
          onboardingUsed: true,
        })
        const bound = await tx.db
          .updateTable('pairings')
          .set({ enrollment_id: found.enrollment.enrollment_id, agent_id: claimed.agentId })
          .where('pairing_id', '=', pairing.pairing_id)
          .where('enrollment_id', 'is', null)
          .executeTakeFirst()
        if (affected(bound) !== 1) throw new Error('pairing bound twice despite its row lock')
        return {
          outcome: 'paired',
          link: found.link,
          agentId: claimed.agentId,
          enrollment: claimed.enrollment,
        }
      }),
  }
}

type FoundLink =
  | Exclude<LinkOutcome, { outcome: 'open' }>
  | (Extract<LinkOutcome, { outcome: 'open' }> & { failures: number })

async function findLink(
  sql: Sql,
  onboardingHash: Buffer,
  now: Date,
  lock: boolean,
  maxFailures = Number.POSITIVE_INFINITY,
): Promise<FoundLink> {
  const query = sql.db
    .selectFrom('enrollments')
    .select([...ENROLLMENT_COLUMNS, 'return_uri', 'return_state', 'onboarding_used_at', 'pairing_failures'])
    .where('onboarding_hash', '=', onboardingHash)
  const row = await (lock ? forUpdate(sql, query) : query).executeTakeFirst()
  if (!row || row.return_uri === null || row.return_state === null) return { outcome: 'unknown' }
  const link = { returnUri: row.return_uri, state: row.return_state }
  const enrollment = toEnrollment(row, now)
  if (row.onboarding_used_at !== null || row.pairing_failures >= maxFailures) return { outcome: 'used', link }
  if (enrollment.state === 'expired') return { outcome: 'expired', link }
  if (enrollment.state !== 'pending') return { outcome: 'used', link }
  return { outcome: 'open', link, enrollment, failures: row.pairing_failures }
}
