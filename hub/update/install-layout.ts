import { readlinkSync, renameSync, symlinkSync, unlinkSync } from 'node:fs'
import path from 'node:path'

/**
 * Where an installed hub keeps its releases (docs/hub-updates.md):
 *
 *   /opt/print-hub/bin/print-hub        the launcher (packaging/print-hub.sh), which rolls back a failed trial
 *   /opt/print-hub/current              → releases/X.Y.Z, the release that runs
 *   /opt/print-hub/releases/X.Y.Z/      one release: lib/, node_modules/, runtime/, share/, release.json
 *   /opt/print-hub/update/trial         the release on trial (key=value lines, read by the launcher too)
 *   /opt/print-hub/update/result        how the last update ended, reported to the cloud
 *   /opt/print-hub/update/downloads/    installers being downloaded
 *
 * The launcher names the root in PRINT_HUB_INSTALL_ROOT; a hub run any other way (tsx in a checkout) has no
 * layout and does not update itself.
 */
export class InstallLayout {
  readonly root: string
  readonly releasesDir: string
  readonly current: string
  readonly stateDir: string
  readonly trialFile: string
  readonly resultFile: string
  readonly downloadsDir: string

  constructor(root: string) {
    this.root = root
    this.releasesDir = path.join(root, 'releases')
    this.current = path.join(root, 'current')
    this.stateDir = path.join(root, 'update')
    this.trialFile = path.join(this.stateDir, 'trial')
    this.resultFile = path.join(this.stateDir, 'result')
    this.downloadsDir = path.join(this.stateDir, 'downloads')
  }

  static fromEnv(env: NodeJS.ProcessEnv): InstallLayout | undefined {
    const root = env.PRINT_HUB_INSTALL_ROOT
    return root ? new InstallLayout(path.resolve(root)) : undefined
  }

  releaseDir(version: string): string {
    return path.join(this.releasesDir, version)
  }

  /** The release key's public half in a release (ota/build.ts puts it there). */
  releaseKeyFile(version: string): string {
    return path.join(this.releaseDir(version), 'share/release-key.pem')
  }

  /** The version `current` points at; undefined when it is missing or points elsewhere. */
  currentVersion(): string | undefined {
    try {
      const target = readlinkSync(this.current)
      return path.dirname(target) === 'releases' ? path.basename(target) : undefined
    } catch {
      return undefined
    }
  }

  /**
   * Points `current` at releases/<version> atomically: a new symlink renamed over the old one (rename(2)
   * replaces the name in one step, so a start at any moment finds the old release or the new one).
   */
  flipTo(version: string): void {
    const temporary = `${this.current}.${process.pid}.new`
    try {
      unlinkSync(temporary)
    } catch {
      // none left from an earlier attempt
    }
    symlinkSync(path.join('releases', version), temporary)
    renameSync(temporary, this.current)
  }
}
