import { readFileSync } from 'node:fs'
import { parseArgs } from 'node:util'
import { SCOPES, type Scope } from '../../protocol/enums.ts'
import { applicationKeyFrom } from '../developer/public-keys.ts'
import { type Environment, NotFoundError, option, RefusedError, UsageError, withStorage } from './common.ts'

/** Developer applications from the command line (docs/operations.md, docs/developer-platform.md). */

async function readKey(file: string) {
  let text: string
  try {
    text = readFileSync(file, 'utf8')
  } catch (error) {
    throw new UsageError(
      `cannot read --public-key ${file}: ${(error as NodeJS.ErrnoException).code ?? error}`,
    )
  }
  try {
    return await applicationKeyFrom(text)
  } catch (error) {
    throw new UsageError(`--public-key ${file}: ${(error as Error).message}`)
  }
}

/** `app create --name N --public-key FILE [--partner]` → {app_id, name, partner, kid, created_at}. */
export async function appCreate(args: string[], env: Environment): Promise<object> {
  const { values } = parseArgs({
    args,
    options: { name: { type: 'string' }, 'public-key': { type: 'string' }, partner: { type: 'boolean' } },
  })
  const name = option(values, 'name')
  const key = await readKey(option(values, 'public-key'))
  return withStorage(env, (storage) =>
    storage.atomically(async (tx) => {
      const application = await tx.applications.create(name, values.partner === true)
      await tx.applications.addKey(application.app_id, key)
      return { ...application, kid: key.kid }
    }),
  )
}

/** `app key add --app ID --public-key FILE` → {app_id, kid, keys}: a further key, for rotation. */
export async function appKeyAdd(args: string[], env: Environment): Promise<object> {
  const { values } = parseArgs({
    args,
    options: { app: { type: 'string' }, 'public-key': { type: 'string' } },
  })
  const appId = option(values, 'app')
  const key = await readKey(option(values, 'public-key'))
  return withStorage(env, async (storage) => {
    if (!(await storage.applications.findById(appId))) throw new NotFoundError(`no application ${appId}`)
    if (!(await storage.applications.addKey(appId, key))) {
      throw new RefusedError(`application ${appId} already has a key with kid ${key.kid}`)
    }
    const keys = await storage.applications.keys(appId)
    return { app_id: appId, kid: key.kid, keys: keys.map((k) => k.kid) }
  })
}

/** `app install --app ID --account ID --permissions a,b` → {installation_id, ...}. */
export async function appInstall(args: string[], env: Environment): Promise<object> {
  const { values } = parseArgs({
    args,
    options: { app: { type: 'string' }, account: { type: 'string' }, permissions: { type: 'string' } },
  })
  const appId = option(values, 'app')
  const accountId = option(values, 'account')
  const permissions = [
    ...new Set(
      option(values, 'permissions')
        .split(/[,\s]+/)
        .filter((p) => p !== ''),
    ),
  ]
  const unknown = permissions.filter((p) => !(SCOPES as readonly string[]).includes(p))
  if (unknown.length > 0 || permissions.length === 0) {
    throw new UsageError(`unknown permission ${unknown.join(', ')}; known: ${SCOPES.join(', ')}`)
  }
  return withStorage(env, async (storage) => {
    const application = await storage.applications.findById(appId)
    if (!application) throw new NotFoundError(`no application ${appId}`)
    if (application.partner) {
      throw new RefusedError(
        `application ${appId} is a partner application: it installs itself on the accounts it provisions (POST /partner-api/v1/accounts)`,
      )
    }
    if (!(await storage.accounts.findById(accountId))) throw new NotFoundError(`no account ${accountId}`)
    try {
      return await storage.applications.install(appId, accountId, permissions as Scope[])
    } catch (error) {
      const existing = await storage.applications.installationOf(appId, accountId)
      if (!existing) throw error
      throw new RefusedError(
        `application ${appId} is already installed on account ${accountId} (installation ${existing.installation_id})`,
      )
    }
  })
}
