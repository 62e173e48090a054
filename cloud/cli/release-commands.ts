import path from 'node:path'
import { parseArgs } from 'node:util'
import { type Catalog, compareVersions, RELEASE_VERSION } from '../../ota/catalog.ts'
import { loadConfig } from '../config.ts'
import { CatalogUnavailable, ReleaseCatalog } from '../releases/release-catalog.ts'
import { chooseRelease } from '../releases/release-choice.ts'
import type { Storage } from '../storage/storage.ts'
import { type Environment, NotFoundError, option, RefusedError, UsageError, withStorage } from './common.ts'

/**
 * Staged roll-outs of hub releases (docs/hub-updates.md): `release pin` holds an account's hubs, or one hub,
 * at a version of the catalog; `release unpin` lets them follow the catalog again; `release status` says
 * which release a hub runs, which one it is to run and why, and how its latest self-update went. Running
 * hubs learn of a change with their next state report.
 */

const TARGET_OPTIONS = { account: { type: 'string' }, hub: { type: 'string' } } as const

/** `--account ID` or `--hub ID`, exactly one. */
function targetOf(values: { account?: string; hub?: string }): { account: string } | { hub: string } {
  if ((values.account === undefined) === (values.hub === undefined))
    throw new UsageError('give either --account ACCOUNT_ID or --hub HUB_ID')
  return values.account !== undefined
    ? { account: option(values, 'account') }
    : { hub: option(values, 'hub') }
}

async function servedCatalog(storage: Storage, env: Environment): Promise<Catalog> {
  const releasesDir = path.join(loadConfig(env).dataDir, 'releases')
  return (await new ReleaseCatalog(releasesDir, storage.servedCatalogs).current()).catalog
}

/** Why the catalog does not let hubs run `version`; undefined when it does. */
function pinRefusal(catalog: Catalog, version: string): string | undefined {
  const versions = catalog.releases.map((r) => r.version)
  if (versions.includes(version)) return undefined
  if (catalog.withdrawn?.includes(version))
    return `release ${version} was withdrawn by the release key: hubs may not run it (the catalog has ${versions.join(', ')})`
  if (catalog.floor !== undefined && compareVersions(version, catalog.floor) < 0)
    return `release ${version} is below the catalog’s floor ${catalog.floor}: hubs may not run it`
  return `the catalog has no release ${version} (it has ${versions.join(', ')})`
}

async function pin(storage: Storage, target: { account: string } | { hub: string }, version: string | null) {
  if ('account' in target) {
    if (!(await storage.releasePins.pinAccount(target.account, version)))
      throw new NotFoundError(`no account ${target.account}`)
    return { account_id: target.account, release_pin: version }
  }
  if (!(await storage.releasePins.pinHub(target.hub, version)))
    throw new NotFoundError(`no hub ${target.hub}`)
  return { agent_id: target.hub, release_pin: version }
}

export function releasePin(args: string[], env: Environment): Promise<object> {
  const { values } = parseArgs({ args, options: { ...TARGET_OPTIONS, version: { type: 'string' } } })
  const target = targetOf(values)
  const version = option(values, 'version')
  if (!RELEASE_VERSION.test(version))
    throw new UsageError(`--version must be X.Y.Z (got ${JSON.stringify(version)})`)
  return withStorage(env, async (storage) => {
    let catalog: Catalog
    try {
      catalog = await servedCatalog(storage, env)
    } catch (error) {
      if (error instanceof CatalogUnavailable)
        throw new RefusedError(`no catalog to pin from: ${error.message}`)
      throw error
    }
    const refusal = pinRefusal(catalog, version)
    if (refusal) throw new RefusedError(refusal)
    return pin(storage, target, version)
  })
}

export function releaseUnpin(args: string[], env: Environment): Promise<object> {
  const { values } = parseArgs({ args, options: TARGET_OPTIONS })
  const target = targetOf(values)
  return withStorage(env, (storage) => pin(storage, target, null))
}

export function releaseStatus(args: string[], env: Environment): Promise<object> {
  const { values } = parseArgs({ args, options: { hub: { type: 'string' } } })
  const hub = option(values, 'hub')
  return withStorage(env, async (storage) => {
    const record = await storage.releasePins.forHub(hub)
    if (!record) throw new NotFoundError(`no hub ${hub}`)
    let catalog: Catalog | undefined
    try {
      catalog = await servedCatalog(storage, env)
    } catch (error) {
      if (!(error instanceof CatalogUnavailable)) throw error
    }
    const choice = catalog && chooseRelease(record, catalog)
    return {
      agent_id: record.agent_id,
      account_id: record.account_id,
      version: record.version,
      release: choice?.version ?? null,
      release_source: choice?.source ?? null,
      account_pin: record.account_pin,
      hub_pin: record.hub_pin,
      update: record.update,
    }
  })
}
