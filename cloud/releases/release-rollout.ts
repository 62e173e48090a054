import type { Logger } from 'pino'
import { architectureNamed } from '../../ota/architectures.ts'
import type { HubPayload, HubUpdate } from '../../protocol/hub-messages.ts'
import { PROTOCOL_VERSION } from '../../protocol/hub-messages.ts'
import type { HubBus } from '../broker/hub-bus.ts'
import type { HubReleaseRecord } from '../storage/release-pins.ts'
import type { Storage } from '../storage/storage.ts'
import { CatalogUnavailable, type ReleaseCatalog } from './release-catalog.ts'
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

const sameUpdate = (a: HubUpdate | null, b: HubUpdate | null) => JSON.stringify(a) === JSON.stringify(b)

/**
 * The cloud end of hub self-updates (docs/hub-updates.md). Each state report of a hub records its latest
 * update and, when it runs another release than the one chosen for it, tells it over its MQTT session
 * (`run_release`). Hubs report their state on every connect and every health round, so a publish or a pin
 * reaches every online hub within one round, on any number of cloud nodes, with no timer of its own.
 */
export class ReleaseRollout {
  readonly #o: ReleaseRolloutOptions

  constructor(options: ReleaseRolloutOptions) {
    this.#o = options
  }

  /** `before`: the hub's record as its state report was stored (agents.setReportedVersion answers with it). */
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
    let served: Awaited<ReturnType<ReleaseCatalog['current']>>
    try {
      served = await catalog.current(this.#o.catalogMaxAgeMs ?? CATALOG_MAX_AGE_MS)
    } catch (error) {
      if (error instanceof CatalogUnavailable) return // no release published: nothing to roll out
      throw error
    }
    const choice = chooseRelease(before, served.catalog.current.version)
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
}
