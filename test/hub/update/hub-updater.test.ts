import { execFileSync } from 'node:child_process'
import { createHash, generateKeyPairSync, type KeyObject } from 'node:crypto'
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import path from 'node:path'
import { pino } from 'pino'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { HubUpdater } from '../../../hub/update/hub-updater.ts'
import { InstallLayout } from '../../../hub/update/install-layout.ts'
import { installerArchitecture } from '../../../hub/update/release-download.ts'
import { readResult, readTrial, writeTrial } from '../../../hub/update/update-records.ts'
import type { Architecture } from '../../../ota/architectures.ts'
import { type Catalog, keyIdOf, publicKeyPem, signCatalog } from '../../../ota/catalog.ts'
import type { HubUpdate } from '../../../protocol/hub-messages.ts'
import { tempDir } from '../../helpers/temp-dir.ts'

// The self-update against a real HTTP server on 127.0.0.1 that serves a signed catalog and a real tarball
// (laid out as `ota build` lays it out), into a real install root in a temporary directory. The restart is
// the one part stood in for: `restartInto` runs the flip and records that it was asked.

const ARCH = installerArchitecture()
const T0 = Date.parse('2026-11-24T12:00:00.000Z')
const TRIAL_MS = 60_000

interface Served {
  catalogText: string
  signature: string
  files: Map<string, Buffer>
}

describe('the hub updater', () => {
  let dir: ReturnType<typeof tempDir>
  let layout: InstallLayout
  let server: http.Server
  let cloudUrl: string
  let served: Served
  let releaseKey: { privateKey: KeyObject; publicKey: KeyObject }
  let tarball: Buffer
  let restarts: number
  let changes: number
  let gaveUp: string[]
  /** In the hub's data directory: the highest catalog serial it has verified. */
  let catalogRecordFile: string
  /** The server answers the catalog with a body that never ends. */
  let endless: boolean

  const tarballName = (version: string) => `print-hub_${version}_linux-${ARCH}.tar.gz`

  /** A release tree as ota build stages it, packed with tar. */
  const buildTarball = (version: string): Buffer => {
    const stage = path.join(dir.path, `stage-${version}`)
    const release = path.join(stage, 'opt/print-hub/releases', version)
    for (const sub of ['runtime/bin', 'lib', 'share']) mkdirSync(path.join(release, sub), { recursive: true })
    writeFileSync(path.join(release, 'runtime/bin/node'), '#!/bin/sh\n')
    writeFileSync(path.join(release, 'lib/hub.mjs'), `// hub ${version}\n`)
    writeFileSync(path.join(release, 'share/release-key.pem'), publicKeyPem(releaseKey.publicKey))
    writeFileSync(path.join(release, 'release.json'), JSON.stringify({ version }))
    mkdirSync(path.join(stage, 'lib/systemd/system'), { recursive: true })
    writeFileSync(path.join(stage, 'lib/systemd/system/print-hub.service'), '[Service]\n')
    const file = path.join(dir.path, tarballName(version))
    execFileSync('tar', ['-czf', file, '-C', stage, 'opt', 'lib'])
    return readFileSync(file)
  }

  /** Serial 1, valid for 30 days from T0, unless told otherwise. */
  const catalogFor = (
    versions: Record<string, Buffer>,
    key: KeyObject,
    freshness: Partial<Pick<Catalog, 'serial' | 'expires_at'>> = {},
  ): Catalog => {
    const releases = Object.entries(versions).map(([version, bytes]) => ({
      version,
      released_at: new Date(T0).toISOString(),
      notes: '',
      installers: [
        {
          filename: tarballName(version),
          platform: 'linux' as const,
          architecture: ARCH as Architecture,
          format: 'tar.gz' as const,
          size_bytes: bytes.length,
          sha256: createHash('sha256').update(bytes).digest('hex'),
        },
      ],
    }))
    return {
      catalog_version: 1,
      serial: 1,
      published_at: new Date(T0).toISOString(),
      expires_at: new Date(T0 + 30 * 86_400_000).toISOString(),
      key_id: keyIdOf(key),
      current: releases[0]!,
      releases,
      ...freshness,
    }
  }

  const publish = (
    versions: Record<string, Buffer>,
    signWith = releaseKey,
    freshness: Partial<Pick<Catalog, 'serial' | 'expires_at'>> = {},
  ) => {
    const signed = signCatalog(catalogFor(versions, signWith.publicKey, freshness), signWith.privateKey)
    served = {
      catalogText: signed.text,
      signature: signed.signature,
      files: new Map(Object.entries(versions).map(([v, bytes]) => [tarballName(v), bytes])),
    }
  }

  const updater = (options: { layout?: InstallLayout | undefined; now?: number } = {}) => {
    const u = new HubUpdater({
      layout: 'layout' in options ? options.layout : layout,
      running: '1.0.0',
      cloudUrl,
      catalogRecordFile,
      trialMs: TRIAL_MS,
      logger: pino({ level: 'silent' }),
      async restartInto(flip) {
        restarts++
        flip()
      },
      onChange: () => {
        changes++
      },
      giveUp: (reason) => gaveUp.push(reason),
      now: () => options.now ?? T0,
    })
    u.start()
    return u
  }

  /** Runs an update to `version` and resolves once it has ended: restarted, or failed. */
  const update = async (u: HubUpdater, version: string): Promise<HubUpdate | undefined> => {
    const before = restarts
    u.runRelease(version)
    await expect.poll(() => restarts > before || u.report()?.status === 'failed').toBe(true)
    return u.report()
  }

  beforeEach(async () => {
    dir = tempDir('hub-updater-')
    layout = new InstallLayout(path.join(dir.path, 'opt/print-hub'))
    catalogRecordFile = path.join(dir.path, 'var/lib/print-hub/release-catalog')
    releaseKey = generateKeyPairSync('ed25519')
    // The running release 1.0.0, installed, with the release key in its package.
    mkdirSync(path.join(layout.releaseDir('1.0.0'), 'share'), { recursive: true })
    writeFileSync(layout.releaseKeyFile('1.0.0'), publicKeyPem(releaseKey.publicKey))
    symlinkSync('releases/1.0.0', layout.current)
    tarball = buildTarball('1.1.0')
    publish({ '1.1.0': tarball })
    restarts = 0
    changes = 0
    gaveUp = []
    endless = false
    server = http.createServer((req, res) => {
      if (req.url === '/agent-download-api/v1/releases') {
        res.writeHead(200, { 'content-type': 'application/json', 'x-catalog-signature': served.signature })
        if (endless) {
          // Chunked, without Content-Length, for as long as the hub reads.
          const chunk = Buffer.alloc(64 * 1024, 0x20)
          const more = () => {
            while (res.write(chunk)) if (res.writableLength > 1 << 22) break
          }
          res.on('drain', more)
          res.on('close', () => res.off('drain', more))
          more()
          return
        }
        res.end(served.catalogText)
        return
      }
      const name = decodeURIComponent(req.url?.replace('/agent-download-api/v1/installers/', '') ?? '')
      const bytes = served.files.get(name)
      if (!bytes) {
        res.writeHead(404).end()
        return
      }
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': bytes.length })
      res.end(bytes)
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    cloudUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  })
  afterEach(async () => {
    await new Promise((resolve) => server.close(resolve))
    dir.remove()
  })

  it('downloads, verifies and unpacks the release beside the running one, records the trial, then flips current', async () => {
    const u = updater()
    expect(await update(u, '1.1.0')).toEqual({
      version: '1.1.0',
      status: 'in_progress',
      at: new Date(T0).toISOString(),
    })
    expect(restarts).toBe(1)
    expect(readlinkSync(layout.current)).toBe('releases/1.1.0')
    expect(readTrial(layout.trialFile)).toEqual({
      version: '1.1.0',
      previous: '1.0.0',
      deadline: T0 + TRIAL_MS,
      starts: 0,
    })
    // Only the release's directory came out of the tarball; the download is gone.
    expect(readdirSync(layout.releaseDir('1.1.0')).sort()).toEqual([
      'lib',
      'release.json',
      'runtime',
      'share',
    ])
    expect(readFileSync(path.join(layout.releaseDir('1.1.0'), 'lib/hub.mjs'), 'utf8')).toBe('// hub 1.1.0\n')
    expect(readdirSync(layout.releasesDir).sort()).toEqual(['1.0.0', '1.1.0'])
    expect(readdirSync(layout.downloadsDir)).toEqual([])
    expect(changes).toBe(1)
  })

  const refused = async (failure: HubUpdate['failure'], detail: RegExp) => {
    const u = updater()
    const report = await update(u, '1.1.0')
    expect(report).toMatchObject({ version: '1.1.0', status: 'failed', failure })
    expect(report?.detail).toMatch(detail)
    // Nothing switched, nothing left behind, and the outcome is kept for the next start's report.
    expect(restarts).toBe(0)
    expect(readlinkSync(layout.current)).toBe('releases/1.0.0')
    expect(existsSync(layout.releaseDir('1.1.0'))).toBe(false)
    expect(existsSync(layout.trialFile)).toBe(false)
    expect(readResult(layout.resultFile)).toEqual(report)
    expect(updater().report()).toEqual(report)
  }

  it('refuses a catalog changed after it was signed', async () => {
    served.catalogText = served.catalogText.replace('"notes": ""', '"notes": "x"')
    await refused('catalog_rejected', /signature does not verify/)
  })

  it('refuses a catalog signed by another key than the one in its package', async () => {
    publish({ '1.1.0': tarball }, generateKeyPairSync('ed25519'))
    await refused('catalog_rejected', /signature does not verify/)
  })

  it('refuses a catalog with a lower serial than one it verified before, also after a restart (a rollback)', async () => {
    publish({ '1.1.0': tarball }, releaseKey, { serial: 5 })
    served.files.clear()
    expect(await update(updater(), '1.1.0')).toMatchObject({ status: 'failed', failure: 'download_failed' })
    expect(readFileSync(catalogRecordFile, 'utf8')).toBe('serial=5\n')
    publish({ '1.1.0': tarball }, releaseKey, { serial: 4 })
    await refused(
      'catalog_rejected',
      /^the catalog has serial 4, lower than serial 5 this hub has verified: an older catalog is being served$/,
    )
    expect(readFileSync(catalogRecordFile, 'utf8')).toBe('serial=5\n')
  })

  it('takes a catalog of the serial it verified before, and a higher one, and keeps the highest', async () => {
    publish({ '1.1.0': tarball }, releaseKey, { serial: 5 })
    served.files.clear()
    await update(updater(), '1.1.0')
    publish({ '1.1.0': tarball }, releaseKey, { serial: 5 })
    await update(updater(), '1.1.0')
    expect(restarts).toBe(1)
    publish({ '1.1.0': tarball }, releaseKey, { serial: 9 })
    await update(updater(), '1.1.0')
    expect(readFileSync(catalogRecordFile, 'utf8')).toBe('serial=9\n')
  })

  it('refuses an expired catalog (a freeze): nothing switched, the hub runs on', async () => {
    publish({ '1.1.0': tarball }, releaseKey, { expires_at: new Date(T0).toISOString() })
    await refused(
      'catalog_rejected',
      /^the catalog expired at 2026-11-24T12:00:00\.000Z: the release key’s holder must re-sign it \(ota resign\)$/,
    )
  })

  it('refuses a catalog that carries no serial and expiry (signed before they existed)', async () => {
    const legacy = catalogFor({ '1.1.0': tarball }, releaseKey.publicKey)
    delete legacy.serial
    delete legacy.expires_at
    served.catalogText = signCatalog(legacy, releaseKey.privateKey).text
    served.signature = signCatalog(legacy, releaseKey.privateKey).signature
    await refused('catalog_rejected', /^the catalog has no serial and expiry: re-sign it with ota resign$/)
    expect(existsSync(catalogRecordFile)).toBe(false)
  })

  it('stops reading a catalog that does not end (endless data) past 1 MiB', async () => {
    endless = true
    await refused('catalog_rejected', /^the catalog is longer than 1048576 bytes$/)
  })

  it('refuses an installer whose bytes differ from the catalog’s SHA-256', async () => {
    const tampered = Buffer.from(tarball)
    tampered[tampered.length >> 1]! ^= 0xff
    served.files.set(tarballName('1.1.0'), tampered)
    await refused('installer_rejected', /SHA-256 [0-9a-f]{64} and \d+ bytes, the catalog says/)
  })

  it('refuses an installer longer than the catalog says, without reading it all', async () => {
    served.files.set(tarballName('1.1.0'), Buffer.concat([tarball, Buffer.alloc(1 << 20)]))
    await refused('installer_rejected', /longer than the catalog says/)
  })

  it('does not start again a version that failed', async () => {
    served.catalogText = served.catalogText.replace('"notes": ""', '"notes": "x"')
    const u = updater()
    const failed = await update(u, '1.1.0')
    expect(failed).toMatchObject({ status: 'failed', failure: 'catalog_rejected' })
    const changed = changes
    u.runRelease('1.1.0')
    expect(u.report()).toEqual(failed)
    expect(changes).toBe(changed)
  })

  it('tries again, when told again, a version whose download failed', async () => {
    served.files.clear()
    const u = updater()
    expect(await update(u, '1.1.0')).toMatchObject({ status: 'failed', failure: 'download_failed' })
    served.files.set(tarballName('1.1.0'), tarball)
    await update(u, '1.1.0')
    expect(restarts).toBe(1)
    expect(readlinkSync(layout.current)).toBe('releases/1.1.0')
  })

  it('a hub stopped during an update abandons it without recording a failure', async () => {
    const u = new HubUpdater({
      layout,
      running: '1.0.0',
      cloudUrl,
      catalogRecordFile,
      trialMs: TRIAL_MS,
      logger: pino({ level: 'silent' }),
      // As hub/cli.ts does once a signal has stopped the hub.
      restartInto: async () => {
        throw new Error('the hub is stopping')
      },
      onChange: () => {},
      giveUp: () => {},
    })
    u.start()
    u.runRelease('1.1.0')
    expect(u.report()).toMatchObject({ version: '1.1.0', status: 'in_progress' })
    u.stop()
    await expect.poll(() => u.report()).toBeUndefined()
    expect(existsSync(layout.resultFile)).toBe(false)
    expect(readlinkSync(layout.current)).toBe('releases/1.0.0')
    // Once stopped it takes no new update.
    u.runRelease('1.1.0')
    expect(u.report()).toBeUndefined()
  })

  it('fails a release the catalog does not list, and one whose tarball holds another release', async () => {
    const u = updater()
    expect(await update(u, '2.0.0')).toMatchObject({ status: 'failed', failure: 'not_in_catalog' })
    publish({ '1.1.0': buildTarball('1.2.0') })
    expect(await update(u, '1.1.0')).toMatchObject({ status: 'failed', failure: 'install_failed' })
    expect(readdirSync(layout.releasesDir)).toEqual(['1.0.0'])
  })

  it('a hub not run from an installed release reports that it cannot update itself', async () => {
    const u = updater({ layout: undefined })
    u.runRelease('1.1.0')
    expect(u.report()).toMatchObject({ version: '1.1.0', status: 'failed', failure: 'not_updatable' })
    expect(changes).toBe(1)
  })

  describe('the new release on trial', () => {
    const running = '1.1.0'
    const onTrial = (u: (o?: { now?: number }) => HubUpdater, now: number) => {
      writeTrial(layout.trialFile, {
        version: running,
        previous: '1.0.0',
        deadline: T0 + TRIAL_MS,
        starts: 1,
      })
      return u({ now })
    }
    const trialUpdater = (o: { now?: number } = {}) => {
      const u = new HubUpdater({
        layout,
        running,
        cloudUrl,
        catalogRecordFile,
        trialMs: TRIAL_MS,
        logger: pino({ level: 'silent' }),
        restartInto: async () => {},
        onChange: () => {},
        giveUp: (reason) => gaveUp.push(reason),
        now: () => o.now ?? T0,
      })
      u.start()
      return u
    }

    it('is kept once connected: result succeeded, trial gone, releases older than the previous one deleted', async () => {
      mkdirSync(layout.releaseDir('0.9.0'))
      mkdirSync(layout.releaseDir(running))
      const u = onTrial(trialUpdater, T0 + 1000)
      u.connected()
      u.stop()
      const result = { version: running, status: 'succeeded', at: new Date(T0 + 1000).toISOString() }
      expect(u.report()).toEqual(result)
      expect(readResult(layout.resultFile)).toEqual(result)
      expect(existsSync(layout.trialFile)).toBe(false)
      await expect.poll(() => readdirSync(layout.releasesDir).sort()).toEqual(['1.0.0', '1.1.0'])
      expect(gaveUp).toEqual([])
    })

    it('gives up when its time has run out, leaving the reason for the launcher', async () => {
      const u = onTrial(trialUpdater, T0 + TRIAL_MS + 1)
      await expect.poll(() => gaveUp).toEqual(['it did not connect to the cloud within 60 s'])
      u.stop()
      expect(readTrial(layout.trialFile)).toMatchObject({
        version: running,
        starts: 1,
        reason: 'it did not connect to the cloud within 60 s',
      })
      // A connect after giving up confirms nothing.
      u.connected()
      expect(existsSync(layout.resultFile)).toBe(false)
    })
  })
})
