import { randomUUID } from 'node:crypto'
import { affected, forUpdate, inTransaction, type Sql } from './engine.ts'
import type { UsersTable } from './schema.ts'

/** A console user as pages and the CLI see it (never the password hash). */
export interface User {
  user_id: string
  account_id: string
  email: string
  role: UsersTable['role']
  created_at: string
  /** Whether the person has set a password (until then they cannot sign in). */
  has_password: boolean
}

export interface NewUser {
  accountId: string
  email: string
  role: UsersTable['role']
}

export type RemoveOutcome = 'removed' | 'not_found' | 'last_owner'

/** What a set-password link finds: `open` until used or expired. */
export type SetPasswordLink =
  | { state: 'unknown' | 'used' | 'expired' }
  | { state: 'open'; user: User; expiresAt: number }

/** A user whom a sign-in with their e-mail may be for, and their password hash. */
export interface SignInCandidate {
  user: User
  passwordHash: string | null
}

export interface UserRepository {
  /**
   * A new user without a password; null when the account has a user with this e-mail (compared lower-cased).
   * An e-mail is unique within an account only: another account's users are no concern of this one.
   */
  create(user: NewUser, now: Date): Promise<User | null>
  findById(userId: string): Promise<User | undefined>
  /** Every user with this e-mail (any case), one per account, oldest first, with their password hashes. */
  findForSignIn(email: string): Promise<SignInCandidate[]>
  /** The account's users, oldest first. */
  listByAccount(accountId: string): Promise<User[]>
  /**
   * Removes the account's user with its sessions and set-password links in one transaction; refused when it
   * is the account's last owner.
   */
  remove(accountId: string, userId: string): Promise<RemoveOutcome>
  /** Stores a one-time set-password link (its token's SHA-256 digest). */
  addSetPasswordLink(userId: string, tokenHash: Buffer, expiresAt: number): Promise<void>
  findSetPasswordLink(tokenHash: Buffer, now: number): Promise<SetPasswordLink>
  /** Sets the link's user's password and spends the link, once (a second use finds it `used`). */
  useSetPasswordLink(tokenHash: Buffer, passwordHash: string, now: number): Promise<SetPasswordLink>
  /** Sets a password straight away (tests and the harness; people use a link). */
  setPasswordHash(userId: string, passwordHash: string): Promise<void>
}

const COLUMNS = ['user_id', 'account_id', 'email', 'role', 'created_at', 'password_hash'] as const

type Row = Pick<UsersTable, (typeof COLUMNS)[number]>

const toUser = ({ password_hash, ...row }: Row): User => ({ ...row, has_password: password_hash !== null })

/** E-mail addresses are compared without case (what people expect, though RFC 5321 allows a case-sensitive local part). */
export const normalizeEmail = (email: string): string => email.trim().toLowerCase()

export function createUserRepository(sql: Sql): UserRepository {
  const { db } = sql
  const linkState = async (tx: Sql, tokenHash: Buffer, now: number): Promise<SetPasswordLink> => {
    const link = await forUpdate(
      tx,
      tx.db.selectFrom('set_password_tokens').selectAll().where('token_hash', '=', tokenHash),
    ).executeTakeFirst()
    if (!link) return { state: 'unknown' }
    if (link.used_at !== null) return { state: 'used' }
    if (link.expires_at <= now) return { state: 'expired' }
    const user = await tx.db
      .selectFrom('users')
      .select(COLUMNS)
      .where('user_id', '=', link.user_id)
      .executeTakeFirst()
    return user ? { state: 'open', user: toUser(user), expiresAt: link.expires_at } : { state: 'unknown' }
  }
  return {
    async create({ accountId, email, role }, now) {
      const row = {
        user_id: randomUUID(),
        account_id: accountId,
        email: normalizeEmail(email),
        role,
        password_hash: null,
        created_at: now.toISOString(),
      }
      const inserted = await db
        .insertInto('users')
        .values(row)
        .onConflict((conflict) => conflict.columns(['account_id', 'email']).doNothing())
        .executeTakeFirst()
      return Number(inserted.numInsertedOrUpdatedRows ?? 0) === 1 ? toUser(row) : null
    },

    async findById(userId) {
      const row = await db
        .selectFrom('users')
        .select(COLUMNS)
        .where('user_id', '=', userId)
        .executeTakeFirst()
      return row && toUser(row)
    },

    async findForSignIn(email) {
      const rows = await db
        .selectFrom('users')
        .select(COLUMNS)
        .where('email', '=', normalizeEmail(email))
        .orderBy('created_at')
        .orderBy('user_id')
        .execute()
      return rows.map((row) => ({ user: toUser(row), passwordHash: row.password_hash }))
    },

    async listByAccount(accountId) {
      const rows = await db
        .selectFrom('users')
        .select(COLUMNS)
        .where('account_id', '=', accountId)
        .orderBy('created_at')
        .orderBy('email')
        .execute()
      return rows.map(toUser)
    },

    remove: (accountId, userId) =>
      inTransaction(sql, async (tx): Promise<RemoveOutcome> => {
        // Every owner row of the account locked, so that two owners removing each other cannot both succeed.
        const users = await forUpdate(
          tx,
          tx.db.selectFrom('users').select(['user_id', 'role']).where('account_id', '=', accountId),
        ).execute()
        const user = users.find((u) => u.user_id === userId)
        if (!user) return 'not_found'
        if (user.role === 'owner' && users.filter((u) => u.role === 'owner').length === 1) return 'last_owner'
        await tx.db.deleteFrom('console_sessions').where('user_id', '=', userId).execute()
        await tx.db.deleteFrom('set_password_tokens').where('user_id', '=', userId).execute()
        await tx.db.deleteFrom('users').where('user_id', '=', userId).execute()
        return 'removed'
      }),

    async addSetPasswordLink(userId, tokenHash, expiresAt) {
      await db
        .insertInto('set_password_tokens')
        .values({ token_hash: tokenHash, user_id: userId, expires_at: expiresAt, used_at: null })
        .execute()
    },

    findSetPasswordLink: (tokenHash, now) => linkState(sql, tokenHash, now),

    useSetPasswordLink: (tokenHash, passwordHash, now) =>
      inTransaction(sql, async (tx) => {
        const link = await linkState(tx, tokenHash, now)
        if (link.state !== 'open') return link
        const spent = await tx.db
          .updateTable('set_password_tokens')
          .set({ used_at: new Date(now).toISOString() })
          .where('token_hash', '=', tokenHash)
          .where('used_at', 'is', null)
          .executeTakeFirst()
        if (affected(spent) !== 1) return { state: 'used' }
        await tx.db
          .updateTable('users')
          .set({ password_hash: passwordHash })
          .where('user_id', '=', link.user.user_id)
          .execute()
        return { ...link, user: { ...link.user, has_password: true } }
      }),

    async setPasswordHash(userId, passwordHash) {
      await db
        .updateTable('users')
        .set({ password_hash: passwordHash })
        .where('user_id', '=', userId)
        .execute()
    },
  }
}
