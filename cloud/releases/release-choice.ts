import type { Catalog } from '../../ota/catalog.ts'
import { type HubUpdate, updateSettled } from '../../protocol/hub-messages.ts'

/**
 * Which release a hub should run, and whether to tell it (docs/hub-updates.md). A version pinned for the hub
 * comes first, then one pinned for its account, then the catalog's current release: pins hold hubs back (or
 * move a few ahead) during a staged roll-out. A pin to a version the catalog no longer lists (withdrawn by the
 * release key, or below its floor) is passed over: a hub is never held on a release the key took back.
 */
export interface ReleaseChoice {
  version: string
  source: 'hub_pin' | 'account_pin' | 'catalog'
}

export function chooseRelease(
  pins: { hub_pin: string | null; account_pin: string | null },
  catalog: Pick<Catalog, 'current' | 'releases'>,
): ReleaseChoice {
  const listed = (pin: string | null): pin is string =>
    pin !== null && catalog.releases.some((r) => r.version === pin)
  if (listed(pins.hub_pin)) return { version: pins.hub_pin, source: 'hub_pin' }
  if (listed(pins.account_pin)) return { version: pins.account_pin, source: 'account_pin' }
  return { version: catalog.current.version, source: 'catalog' }
}

/**
 * Whether the hub is to be told to run `choice`: not when it cannot update itself (it said so in its state),
 * not when it runs it already, when the catalog does not
 * list it (the hub could not download it), while its update to it is under way, or when its update to it
 * failed (a version that failed on a hub is not offered to that hub again: publish a fixed version, or pin
 * another one), unless only the download failed.
 */
export function shouldTell(
  choice: ReleaseChoice,
  hub: { running: string; updatable: boolean; update: HubUpdate | null },
  catalogVersions: ReadonlySet<string>,
): boolean {
  if (!hub.updatable) return false
  if (hub.running === choice.version) return false
  if (!catalogVersions.has(choice.version)) return false
  if (updateSettled(hub.update, choice.version)) return false
  return true
}
