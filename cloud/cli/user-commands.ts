import { parseArgs } from 'node:util'
import { loadConfig } from '../config.ts'
import type { UserRole } from '../console/console-context.ts'
import { createUserWithLink, isEmailAddress, USER_ROLES } from '../console/new-user.ts'
import { type Environment, NotFoundError, option, RefusedError, UsageError, withStorage } from './common.ts'

/**
 * `user create --account ID --email E --role owner|member` → {user_id, set_password_url}: a console user and
 * their one-time set-password link (docs/console.md). No password on the command line: it would stay in the
 * shell's history and the process list.
 */
export async function userCreate(args: string[], env: Environment): Promise<object> {
  const { values } = parseArgs({
    args,
    options: { account: { type: 'string' }, email: { type: 'string' }, role: { type: 'string' } },
  })
  const accountId = option(values, 'account')
  const email = option(values, 'email').trim()
  const role = option(values, 'role')
  if (!isEmailAddress(email)) throw new UsageError(`--email ${email} is not an e-mail address`)
  if (!(USER_ROLES as readonly string[]).includes(role)) {
    throw new UsageError(`--role must be one of ${USER_ROLES.join(', ')}`)
  }
  const config = loadConfig(env)
  return withStorage(env, async (storage) => {
    const result = await createUserWithLink(
      storage,
      { accountId, email, role: role as UserRole },
      { publicUrl: config.publicUrl, ttlHours: config.setPasswordTtlHours, now: Date.now() },
    )
    if (result.outcome !== 'created') {
      throw result.outcome === 'no_account'
        ? new NotFoundError(`no account ${accountId}`)
        : new RefusedError(`account ${accountId} has a user with e-mail ${email} already`)
    }
    return { user_id: result.user.user_id, set_password_url: result.setPasswordUrl }
  })
}
