import type { Logger } from 'pino'
import { architectureNamed } from '../../ota/architectures.ts'
import type { HubPayload, HubUpdate } from '../../protocol/hub-messages.ts'
import { PROTOCOL_VERSION } from '../../protocol/hub-messages.ts'
import type { HubBus } from '../broker/hub-bus.ts'
import type { HubReleaseRecord } from '../storage/release-pins.ts'
import type { Storage } from '../storage/storage.ts'
import { CatalogUnavailable, type ReleaseCatalog, type ServedCatalog } from './release-catalog.ts'
import { chooseRelease, shouldTell } from './release-choice.ts'

export interface ReleaseRolloutOptions {
  storage: Storage
  bus: HubBus
  catalog: ReleaseCatalog
  logger: Logger
  /** How old a check of the catalog's files a state report may use (1 s: a publish reaches hubs 1 s later). */
  catalogMaxAgeMs?: number
}

const CATALOG_MAX_AGE_MS = 1000
/** From how long before its expiry a catalog is warned about. */
const EXPIRY_WARNING_MS = 7 * 86_400_000
const NOTHING_PUBLISHED = 'no release has been published'

const sameUpdate = (a: HubUpdate | null, b: HubUpdate | null) => JSON.stringify(a) === JSON.stringify(b)

/**
 * The cloud end of hub self-updates (docs/hub-updates.md). Each state report of a hub records its latest
 * update and, when it runs another release than the one chosen for it, tells it over its MQTT session
 * (`run_release`). Hubs report their state on every connect and every health round, so a publish or a pin
 * reaches every online hub within one round, on any number of cloud nodes, with no timer of its own.
 * An expired catalog is not rolled out (hubs refuse it); that, a catalog close to its expiry and one the
 * cloud refuses to serve are logged once each.
 */
export class ReleaseRollout {
  readonly #o: ReleaseRolloutOptions
  /** Catalogs and refusals already logged. */
  readonly #logged = new WeakSet<ServedCatalog>()
  #refusalLogged: string | undefined

  constructor(options: ReleaseRolloutOptions) {
    this.#o = options
  }

  /** `before`: the hub's record as its state report was stored (agents.recordState answers with it). */
  async stateReported(agentId: string, state: HubPayload<'state'>, before: HubReleaseRecord): Promise<void> {
    const { storage, bus, catalog, logger } = this.#o
    const update = state.update ?? null
    if (!sameUpdate(before.update, update)) {
      await storage.releasePins.recordUpdate(agentId, update)
      const line = { agent_id: agentId, version: update?.version, running: state.agent_version }
      if (update?.status === 'failed')
        logger.warn({ ...line, failure: update.failure, detail: update.detail }, 'hub update failed')
      else if (update?.status === 'succeeded') logger.info(line, 'hub updated')
    }
    let served: ServedCatalog
    try {
      served = await catalog.current(this.#o.catalogMaxAgeMs ?? CATALOG_MAX_AGE_MS)
    } catch (error) {
      if (!(error instanceof CatalogUnavailable)) throw error
      if (error.message !== NOTHING_PUBLISHED && this.#refusalLogged !== error.message) {
        this.#refusalLogged = error.message
        logger.error({ reason: error.message }, 'release catalog refused: hubs are not told to update')
      }
      return
    }
    this.#refusalLogged = undefined
    if (!this.#fresh(served)) return
    const choice = chooseRelease(before, served.catalog)
    // A hub can take only a release with a tarball for its architecture (host.arch is Node's name for it).
    const architecture = architectureNamed(state.host.arch)
    const versions = new Set(
      served.catalog.releases
        .filter((r) => r.installers.some((i) => i.architecture === architecture && i.format === 'tar.gz'))
        .map((r) => r.version),
    )
    const hub = { running: state.agent_version, updatable: state.updatable === true, update }
    if (!shouldTell(choice, hub, versions)) return
    logger.debug(
      { agent_id: agentId, version: choice.version, source: choice.source },
      'hub told its release',
    )
    await bus.publish(agentId, 'command', {
      v: PROTOCOL_VERSION,
      command: 'run_release',
      version: choice.version,
    })
  }

  /** Whether the catalog may be rolled out: not once expired. Says so, and when it soon expires, once. */
  #fresh(served: ServedCatalog): boolean {
    const { serial, expires_at: expiresAt } = served.catalog
    const first = !this.#logged.has(served)
    this.#logged.add(served)
    const { logger } = this.#o
    if (expiresAt === undefined) {
      if (first)
        logger.warn(
          'release catalog has no serial and expiry: hubs from this release on refuse it; re-sign it (ota resign)',
        )
      return true
    }
    const left = Date.parse(expiresAt) - Date.now()
    if (left <= 0) {
      if (first)
        logger.error(
          { serial, expires_at: expiresAt },
          'release catalog expired: hubs refuse it and are not told to update; re-sign it (ota resign)',
        )
      return false
    }
    if (left < EXPIRY_WARNING_MS && first)
      logger.warn(
        { serial, expires_at: expiresAt },
        'release catalog expires within 7 days: re-sign it (ota resign) or hubs stop updating',
      )
    return true
  }
}
