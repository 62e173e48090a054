import { generateSecret, hashSecret } from '../../print-api/secrets.ts'
import type { Storage } from '../storage/storage.ts'
import type { User } from '../storage/users.ts'
import type { UserRole } from './console-context.ts'

export const USER_ROLES: readonly UserRole[] = ['owner', 'member']

/** RFC 5321 §4.5.3.1.3 bounds a path to 256 octets (254 for the address); one @, no spaces or controls. */
export function isEmailAddress(email: string): boolean {
  return email.length <= 254 && /^[^\s@\p{Cc}]+@[^\s@\p{Cc}]+$/u.test(email)
}

export type NewUserOutcome =
  | { outcome: 'created'; user: User; setPasswordUrl: string }
  | { outcome: 'email_taken' | 'no_account' }

/**
 * A console user without a password and their one-time set-password link (docs/console.md): the token is
 * shown once, in the URL, and stored only as its SHA-256 digest. Used by the CLI and the Users page.
 */
export async function createUserWithLink(
  storage: Storage,
  user: { accountId: string; email: string; role: UserRole },
  link: { publicUrl: string; ttlHours: number; now: number },
): Promise<NewUserOutcome> {
  if (!(await storage.accounts.findById(user.accountId))) return { outcome: 'no_account' }
  const token = generateSecret('spw')
  return storage.atomically(async (tx): Promise<NewUserOutcome> => {
    const created = await tx.users.create(user, new Date(link.now))
    if (!created) return { outcome: 'email_taken' }
    await tx.users.addSetPasswordLink(
      created.user_id,
      hashSecret(token),
      link.now + link.ttlHours * 3_600_000,
    )
    return {
      outcome: 'created',
      user: created,
      setPasswordUrl: `${link.publicUrl}/console/set-password/${token}`,
    }
  })
}
