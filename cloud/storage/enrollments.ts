import { randomUUID } from 'node:crypto'
import type { EnrollmentState } from '../../protocol/agent-api.ts'
import type { SqliteDatabase } from './database.ts'

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

export interface EnrollmentRepository {
  create(accountId: string, name: string, tokenHash: Buffer, expiresAt: Date): Enrollment
  findById(enrollmentId: string): Enrollment | undefined
  /**
   * Claims the enrollment with this token hash: pending → claimed, creating its agent with the credential
   * hash, in one transaction; a second claim of the same token finds it claimed.
   */
  claim(tokenHash: Buffer, credentialHash: Buffer, hostname: string, now: Date): ClaimOutcome
  revoke(enrollmentId: string, now: Date): boolean
}

interface Row extends Omit<Enrollment, 'state'> {
  state: 'pending' | 'claimed' | 'revoked'
}

/** `expired` is derived: a pending enrollment past its expiry (no timer needs to flip it). */
function toEnrollment(row: Row, now: Date): Enrollment {
  const expired = row.state === 'pending' && Date.parse(row.expires_at) <= now.getTime()
  return { ...row, state: expired ? 'expired' : row.state }
}

export function createEnrollmentRepository(db: SqliteDatabase): EnrollmentRepository {
  const insert = db.prepare(
    `INSERT INTO enrollments (enrollment_id, account_id, name, token_hash, state, created_at, expires_at)
     VALUES (?, ?, ?, ?, 'pending', ?, ?)`,
  )
  const columns =
    'enrollment_id, account_id, name, state, created_at, expires_at, claimed_at, revoked_at, agent_id'
  const byId = db.prepare<[string], Row>(`SELECT ${columns} FROM enrollments WHERE enrollment_id = ?`)
  const byToken = db.prepare<[Buffer], Row>(`SELECT ${columns} FROM enrollments WHERE token_hash = ?`)
  const insertAgent = db.prepare(
    `INSERT INTO agents (agent_id, account_id, name, online, credential_hash, hostname, created_at)
     VALUES (?, ?, ?, 0, ?, ?, ?)`,
  )
  const markClaimed = db.prepare(
    `UPDATE enrollments SET state = 'claimed', claimed_at = ?, agent_id = ? WHERE enrollment_id = ? AND state = 'pending'`,
  )
  const markRevoked = db.prepare(
    `UPDATE enrollments SET state = 'revoked', revoked_at = ? WHERE enrollment_id = ? AND state = 'pending'`,
  )
  const claim = db.transaction(
    (tokenHash: Buffer, credentialHash: Buffer, hostname: string, now: Date): ClaimOutcome => {
      const row = byToken.get(tokenHash)
      if (!row) return { outcome: 'unknown' }
      const enrollment = toEnrollment(row, now)
      if (enrollment.state === 'claimed') return { outcome: 'already_claimed' }
      if (enrollment.state !== 'pending') return { outcome: enrollment.state }
      const agentId = randomUUID()
      const at = now.toISOString()
      insertAgent.run(agentId, row.account_id, row.name, credentialHash, hostname, at)
      markClaimed.run(at, agentId, row.enrollment_id)
      return {
        outcome: 'claimed',
        agentId,
        enrollment: { ...enrollment, state: 'claimed', claimed_at: at, agent_id: agentId },
      }
    },
  )
  return {
    create(accountId, name, tokenHash, expiresAt) {
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
      insert.run(
        enrollment.enrollment_id,
        accountId,
        name,
        tokenHash,
        enrollment.created_at,
        enrollment.expires_at,
      )
      return enrollment
    },
    findById(enrollmentId) {
      const row = byId.get(enrollmentId)
      return row && toEnrollment(row, new Date())
    },
    claim: (tokenHash, credentialHash, hostname, now) =>
      claim.immediate(tokenHash, credentialHash, hostname, now),
    revoke: (enrollmentId, now) => markRevoked.run(now.toISOString(), enrollmentId).changes === 1,
  }
}
