import { execFile } from 'node:child_process'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { mkdir, rename, rm } from 'node:fs/promises'
import path from 'node:path'
import { promisify } from 'node:util'
import type { InstallLayout } from './install-layout.ts'
import { UpdateFailed } from './release-download.ts'

const run = promisify(execFile)

/** Where a release sits inside a tarball built by `ota build`. */
const releaseInTarball = (version: string) => `opt/print-hub/releases/${version}`

/**
 * Unpacks release `version` from a verified tarball beside the running one: into a staging directory under
 * releases/ first, checked (its release.json names the version; its runtime and bundle are there), then
 * renamed to releases/<version>. Only that release's directory is taken from the tarball: the unit file,
 * udev rules and launcher change only with a package upgrade. GNU tar refuses members with `..`.
 */
export async function installRelease(layout: InstallLayout, version: string, tarball: string): Promise<void> {
  const staging = path.join(layout.releasesDir, `.staging-${version}-${process.pid}`)
  const target = layout.releaseDir(version)
  await rm(staging, { recursive: true, force: true })
  await mkdir(staging, { recursive: true })
  try {
    try {
      await run('tar', [
        '--extract',
        '--gzip',
        '--file',
        tarball,
        '--directory',
        staging,
        '--no-same-owner',
        '--strip-components=3',
        releaseInTarball(version),
      ])
    } catch (error) {
      throw new UpdateFailed(
        'install_failed',
        `unpacking ${path.basename(tarball)}: ${(error as Error).message}`,
      )
    }
    const unpacked = path.join(staging, version)
    checkRelease(unpacked, version)
    // A directory left by an earlier attempt (or a release rolled back from) makes way for the verified one.
    await rm(target, { recursive: true, force: true })
    await rename(unpacked, target)
  } catch (error) {
    if (error instanceof UpdateFailed) throw error
    throw new UpdateFailed('install_failed', (error as Error).message)
  } finally {
    await rm(staging, { recursive: true, force: true })
  }
}

function checkRelease(dir: string, version: string): void {
  let manifest: { version?: unknown }
  try {
    manifest = JSON.parse(readFileSync(path.join(dir, 'release.json'), 'utf8')) as { version?: unknown }
  } catch {
    throw new UpdateFailed('install_failed', `the tarball's release ${version} has no readable release.json`)
  }
  if (manifest.version !== version)
    throw new UpdateFailed('install_failed', `the tarball's release.json names ${String(manifest.version)}`)
  for (const file of ['runtime/bin/node', 'lib/hub.mjs', 'share/release-key.pem'])
    if (!existsSync(path.join(dir, file)))
      throw new UpdateFailed('install_failed', `the tarball's release ${version} has no ${file}`)
}

/**
 * Deletes releases other than `keep` (the running one and the one a rollback would return to). A release
 * the package manager installed belongs to root and stays; dpkg removes it with its package.
 */
export async function pruneReleases(layout: InstallLayout, keep: string[]): Promise<string[]> {
  const removed: string[] = []
  for (const name of readdirSync(layout.releasesDir)) {
    if (keep.includes(name) || name.startsWith('.staging-')) continue
    try {
      await rm(path.join(layout.releasesDir, name), { recursive: true })
      removed.push(name)
    } catch {
      // not ours to delete
    }
  }
  return removed
}
