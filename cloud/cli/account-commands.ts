import { parseArgs } from 'node:util'
import { SCOPES } from '../../protocol/enums.ts'
import { createApiClient, isApiClientName, isScope } from '../auth/new-api-client.ts'
import { loadConfig } from '../config.ts'
import { createEnrollment, isHubName } from '../onboarding/new-enrollment.ts'
import { type Environment, NotFoundError, option, UsageError, withStorage } from './common.ts'

/** Accounts and their credentials from the command line: API clients, enrollments, revoking a hub. */

export function accountCreate(args: string[], env: Environment): Promise<object> {
  const { values } = parseArgs({ args, options: { name: { type: 'string' } } })
  const name = option(values, 'name')
  return withStorage(env, (storage) => storage.accounts.create(name))
}

export function clientCreate(args: string[], env: Environment): Promise<object> {
  const { values } = parseArgs({
    args,
    options: { account: { type: 'string' }, scopes: { type: 'string' }, name: { type: 'string' } },
  })
  const accountId = option(values, 'account')
  const scopes = option(values, 'scopes')
    .split(/[,\s]+/)
    .filter((s) => s !== '')
  const unknown = scopes.filter((s) => !isScope(s))
  if (unknown.length > 0)
    throw new UsageError(`unknown scope ${unknown.join(', ')}; known: ${SCOPES.join(', ')}`)
  const name = values.name ?? null
  if (name !== null && !isApiClientName(name))
    throw new UsageError('--name must be 1 to 100 characters, without NUL')
  return withStorage(env, async (storage) => {
    if (!(await storage.accounts.findById(accountId))) throw new UsageError(`no account ${accountId}`)
    const { client, secret } = await createApiClient(storage, accountId, scopes.filter(isScope), name)
    return {
      client_id: client.client_id,
      client_secret: secret,
      account_id: accountId,
      name: client.name,
      scopes: client.scopes,
    }
  })
}

/** Its tokens stop working at once and its secret gets no more (the server reads the same database). */
export function clientRevoke(args: string[], env: Environment): Promise<object> {
  const { values } = parseArgs({ args, options: { id: { type: 'string' } } })
  const id = option(values, 'id')
  return withStorage(env, async (storage) => {
    const client = await storage.apiClients.revoke(id, new Date())
    if (!client) throw new NotFoundError(`no client ${id}`)
    return { client_id: client.client_id, account_id: client.account_id, revoked_at: client.revoked_at }
  })
}

/** Its credential stops working at once; a running cloud closes its MQTT session within a second. */
export function hubRevoke(args: string[], env: Environment): Promise<object> {
  const { values } = parseArgs({ args, options: { id: { type: 'string' } } })
  const id = option(values, 'id')
  return withStorage(env, async (storage) => {
    const revoked = await storage.agents.revoke(id, new Date())
    if (!revoked) throw new NotFoundError(`no hub ${id}`)
    return revoked
  })
}

export function enrollmentCreate(args: string[], env: Environment): Promise<object> {
  const { values } = parseArgs({ args, options: { account: { type: 'string' }, name: { type: 'string' } } })
  const accountId = option(values, 'account')
  const name = option(values, 'name')
  // The partner API's and the console's rule for a hub's name.
  if (!isHubName(name)) throw new UsageError('--name must be 1 to 200 characters, without NUL')
  const config = loadConfig(env)
  return withStorage(env, async (storage) => {
    if (!(await storage.accounts.findById(accountId))) throw new UsageError(`no account ${accountId}`)
    const { enrollment, token } = await createEnrollment(storage.enrollments, {
      accountId,
      name,
      ttlHours: config.enrollmentTtlHours,
    })
    return {
      enrollment_id: enrollment.enrollment_id,
      token,
      expires_at: enrollment.expires_at,
      state: enrollment.state,
    }
  })
}

export function enrollmentRevoke(args: string[], env: Environment): Promise<object> {
  const { values } = parseArgs({ args, options: { id: { type: 'string' } } })
  const id = option(values, 'id')
  return withStorage(env, async (storage) => {
    const enrollment = await storage.enrollments.findById(id)
    if (!enrollment) throw new UsageError(`no enrollment ${id}`)
    if (!(await storage.enrollments.revoke(id, new Date()))) {
      throw new UsageError(
        `enrollment ${id} is ${enrollment.state}; only a pending enrollment can be revoked`,
      )
    }
    return { enrollment_id: id, state: 'revoked' }
  })
}
