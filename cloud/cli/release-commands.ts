import path from 'node:path'
import { parseArgs } from 'node:util'
import { RELEASE_VERSION } from '../../ota/catalog.ts'
import { loadConfig } from '../config.ts'
import { CatalogUnavailable, ReleaseCatalog } from '../releases/release-catalog.ts'
import { chooseRelease } from '../releases/release-choice.ts'
import type { Storage } from '../storage/storage.ts'
import { NotFoundError, option, RefusedError, UsageError, withStorage } from './common.ts'

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

async function catalogVersions(): Promise<{ current: string; versions: string[] }> {
  const served = await new ReleaseCatalog(path.join(loadConfig().dataDir, 'releases')).current()
  return { current: served.catalog.current.version, versions: served.catalog.releases.map((r) => r.version) }
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

export function releasePin(args: string[]): Promise<object> {
  const { values } = parseArgs({ args, options: { ...TARGET_OPTIONS, version: { type: 'string' } } })
  const target = targetOf(values)
  const version = option(values, 'version')
  if (!RELEASE_VERSION.test(version))
    throw new UsageError(`--version must be X.Y.Z (got ${JSON.stringify(version)})`)
  return withStorage(async (storage) => {
    let catalog: Awaited<ReturnType<typeof catalogVersions>>
    try {
      catalog = await catalogVersions()
    } catch (error) {
      if (error instanceof CatalogUnavailable)
        throw new RefusedError(`no catalog to pin from: ${error.message}`)
      throw error
    }
    if (!catalog.versions.includes(version))
      throw new RefusedError(`the catalog has no release ${version} (it has ${catalog.versions.join(', ')})`)
    return pin(storage, target, version)
  })
}

export function releaseUnpin(args: string[]): Promise<object> {
  const { values } = parseArgs({ args, options: TARGET_OPTIONS })
  const target = targetOf(values)
  return withStorage((storage) => pin(storage, target, null))
}

export function releaseStatus(args: string[]): Promise<object> {
  const { values } = parseArgs({ args, options: { hub: { type: 'string' } } })
  const hub = option(values, 'hub')
  return withStorage(async (storage) => {
    const record = await storage.releasePins.forHub(hub)
    if (!record) throw new NotFoundError(`no hub ${hub}`)
    let current: string | null = null
    try {
      current = (await catalogVersions()).current
    } catch (error) {
      if (!(error instanceof CatalogUnavailable)) throw error
    }
    const choice = current === null ? null : chooseRelease(record, current)
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
