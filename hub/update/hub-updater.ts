import { readFileSync } from 'node:fs'
import { rm } from 'node:fs/promises'
import type { Logger } from 'pino'
import { readPublicKey } from '../../ota/catalog.ts'
import { type HubUpdate, updateSettled } from '../../protocol/hub-messages.ts'
import { acceptFreshCatalog } from './catalog-freshness.ts'
import type { InstallLayout } from './install-layout.ts'
import { downloadInstaller, fetchCatalog, tarballOf, UpdateFailed } from './release-download.ts'
import { installRelease, pruneReleases } from './release-install.ts'
import {
  readResult,
  readTrial,
  removeRecord,
  type Trial,
  trialAtStart,
  writeResult,
  writeTrial,
} from './update-records.ts'

export interface UpdaterOptions {
  /** The installation; undefined when the hub does not run from one (it then cannot update itself). */
  layout: InstallLayout | undefined
  /** The version this process runs. */
  running: string
  /** The cloud's PUBLIC_URL: the catalog and installers come from its download endpoints. */
  cloudUrl: string
  /** In the hub's data directory: the highest catalog serial it has verified (catalog-freshness.ts). */
  catalogRecordFile: string
  /** How long a new release has, from the switch, to connect to the cloud (HUB_UPDATE_TRIAL_MS). */
  trialMs: number
  logger: Logger
  /**
   * Stops the hub (each printer's job being written finishes; queued jobs stay in the spool), runs `flip`,
   * and exits for the service manager to start the release `current` now points at.
   */
  restartInto(flip: () => void): Promise<void>
  /** Something to report changed: send the state again. */
  onChange(): void
  /** This release, on trial, did not connect in time: stop and exit with a failure (the launcher rolls back). */
  giveUp(reason: string): void
  now?: () => number
}

/**
 * The hub's self-update (docs/hub-updates.md). Told by the cloud which release to run, it fetches the
 * catalog, verifies it with the release key of its own package, refuses it when it is older than one it
 * verified before or expired, downloads that release's tarball and checks its SHA-256, unpacks it beside the
 * running release, then lets the hub stop (printing jobs finish), records the trial, flips `current` and
 * exits. The new release confirms the trial once it has connected to the cloud; if it does not within the
 * trial time it gives up, and the launcher rolls back to the previous release. Every outcome is kept in the
 * result record and reported in the hub's state.
 */
export class HubUpdater {
  readonly #o: UpdaterOptions
  readonly #now: () => number
  #report: HubUpdate | undefined
  #trial: Trial | undefined
  #trialTimer: NodeJS.Timeout | undefined
  /** The version an update under way goes to. */
  #working: string | undefined
  /** The hub is stopping: an update under way is abandoned, not failed. */
  #stopped = false

  constructor(options: UpdaterOptions) {
    this.#o = options
    this.#now = options.now ?? Date.now
  }

  get updatable(): boolean {
    return this.#o.layout !== undefined
  }

  /** Reads the last result, and starts the trial clock if this release is on trial. */
  start(): void {
    const { layout, logger, running } = this.#o
    if (!layout) return
    this.#report = readResult(layout.resultFile)
    const atStart = trialAtStart(readTrial(layout.trialFile), running, this.#now())
    if (atStart.kind === 'on_trial') {
      this.#trial = atStart.trial
      logger.info(
        { version: running, previous: atStart.trial.previous, connect_within_ms: atStart.remainingMs },
        'release on trial: it is kept once it connects to the cloud',
      )
      this.#trialTimer = setTimeout(() => this.#expire(), atStart.remainingMs)
    } else if (atStart.kind === 'other_release') {
      logger.warn(
        { version: running, trial: atStart.trial.version },
        'a trial of another release is recorded; this hub was not started by its launcher',
      )
    }
  }

  stop(): void {
    this.#stopped = true
    clearTimeout(this.#trialTimer)
  }

  /** The latest update, for the state report. */
  report(): HubUpdate | undefined {
    return this.#report
  }

  /** The MQTT session is up: a release on trial has come up, and is kept. */
  connected(): void {
    const trial = this.#trial
    const layout = this.#o.layout
    if (!trial || !layout) return
    this.#trial = undefined
    clearTimeout(this.#trialTimer)
    const result: HubUpdate = {
      version: trial.version,
      status: 'succeeded',
      at: new Date(this.#now()).toISOString(),
    }
    writeResult(layout.resultFile, result)
    removeRecord(layout.trialFile)
    this.#report = result
    this.#o.logger.info({ version: trial.version, previous: trial.previous }, 'release confirmed')
    void pruneReleases(layout, [trial.version, trial.previous]).then((removed) => {
      if (removed.length > 0) this.#o.logger.info({ removed }, 'old releases deleted')
    })
  }

  /** The cloud says which release to run (command `run_release`). */
  runRelease(version: string): void {
    const { layout, logger, running } = this.#o
    if (this.#stopped || version === running || this.#working !== undefined || this.#trial !== undefined)
      return
    // A command sent before the cloud heard of the failure: the cloud does not offer a failed version again.
    if (updateSettled(this.#report, version)) return
    if (!layout) {
      if (this.#report?.version === version) return
      logger.warn(
        { version },
        'the cloud asks for another release; this hub does not run from an installed release',
      )
      this.#report = {
        version,
        status: 'failed',
        failure: 'not_updatable',
        detail: 'the hub does not run from an installed release (PRINT_HUB_INSTALL_ROOT is not set)',
        at: new Date(this.#now()).toISOString(),
      }
      this.#o.onChange()
      return
    }
    this.#working = version
    void this.#update(layout, version).finally(() => {
      this.#working = undefined
    })
  }

  async #update(layout: InstallLayout, version: string): Promise<void> {
    const { logger, running, cloudUrl, catalogRecordFile } = this.#o
    const before = this.#report
    this.#report = { version, status: 'in_progress', at: new Date(this.#now()).toISOString() }
    this.#o.onChange()
    logger.info({ version, from: running }, 'update started')
    try {
      let key: ReturnType<typeof readPublicKey>
      try {
        key = readPublicKey(readFileSync(layout.releaseKeyFile(running)))
      } catch (error) {
        throw new UpdateFailed(
          'install_failed',
          `the release key of this release: ${(error as Error).message}`,
        )
      }
      const catalog = await fetchCatalog(cloudUrl, key)
      acceptFreshCatalog(catalog, catalogRecordFile, this.#now())
      const tarball = tarballOf(catalog, version)
      const file = await downloadInstaller(cloudUrl, tarball, layout.downloadsDir)
      await installRelease(layout, version, file)
      await rm(file, { force: true })
      logger.info({ version }, 'update unpacked; switching once no job is printing')
      await this.#o.restartInto(() => this.#flip(layout, version))
    } catch (error) {
      if (this.#stopped) {
        // Stopped (a shutdown, a reboot) before the switch: nothing failed; the cloud says so again later.
        this.#report = before
        logger.info({ version }, 'update abandoned: the hub is stopping')
        return
      }
      const failed =
        error instanceof UpdateFailed ? error : new UpdateFailed('install_failed', (error as Error).message)
      const result: HubUpdate = {
        version,
        status: 'failed',
        failure: failed.failure,
        detail: failed.message.slice(0, 500),
        at: new Date(this.#now()).toISOString(),
      }
      try {
        writeResult(layout.resultFile, result)
      } catch (writeError) {
        logger.warn({ err: writeError }, 'the update result could not be recorded')
      }
      this.#report = result
      const line = { version, failure: failed.failure, detail: failed.message }
      // A catalog or installer that fails its check was tampered with (or broken) on the way: say so loudly.
      if (failed.failure === 'catalog_rejected' || failed.failure === 'installer_rejected')
        logger.error(line, 'update refused')
      else logger.warn(line, 'update failed')
      this.#o.onChange()
    }
  }

  /** The switch: the trial first (so that the launcher knows), then `current`, atomically. */
  #flip(layout: InstallLayout, version: string): void {
    const trial: Trial = {
      version,
      previous: this.#o.running,
      deadline: this.#now() + this.#o.trialMs,
      starts: 0,
    }
    writeTrial(layout.trialFile, trial)
    try {
      layout.flipTo(version)
    } catch (error) {
      removeRecord(layout.trialFile)
      writeResult(layout.resultFile, {
        version,
        status: 'failed',
        failure: 'install_failed',
        detail: `switching to it failed: ${(error as Error).message}`.slice(0, 500),
        at: new Date(this.#now()).toISOString(),
      })
      throw error
    }
    this.#o.logger.info({ version, previous: this.#o.running }, 'switched to the new release; restarting')
  }

  #expire(): void {
    const trial = this.#trial
    const layout = this.#o.layout
    if (!trial || !layout) return
    this.#trial = undefined
    const reason = `it did not connect to the cloud within ${Math.round(this.#o.trialMs / 1000)} s`
    writeTrial(layout.trialFile, { ...trial, reason })
    this.#o.logger.error(
      { version: trial.version, previous: trial.previous },
      `release on trial gave up: ${reason}; the launcher rolls back`,
    )
    this.#o.giveUp(reason)
  }
}
