import path from 'node:path'
import { pino } from 'pino'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { HubBus } from '../../../cloud/broker/hub-bus.ts'
import { ReleaseCatalog } from '../../../cloud/releases/release-catalog.ts'
import { ReleaseRollout } from '../../../cloud/releases/release-rollout.ts'
import { openStorage, type Storage } from '../../../cloud/storage/storage.ts'
import { withdrawRelease } from '../../../ota/resign.ts'
import type { HubPayload, HubUpdate } from '../../../protocol/hub-messages.ts'
import { fakeReleasePublisher } from '../../helpers/fake-release.ts'
import { tempDir } from '../../helpers/temp-dir.ts'

const state = (
  version: string,
  update?: HubUpdate,
  updatable = true,
  arch = 'arm64',
): HubPayload<'state'> => ({
  v: 1,
  agent_version: version,
  host: { hostname: 'pi', platform: 'linux', arch },
  printers: [],
  ...(update && { update }),
  ...(updatable && { updatable }),
})

describe('release roll-out: what a hub is told after its state report (real SQLite, a signed catalog)', () => {
  let dir: ReturnType<typeof tempDir>
  let storage: Storage
  let sent: { agentId: string; payload: unknown }[]
  let logged: { level: number; msg: string }[]
  let rollout: ReleaseRollout
  let accountId: string
  let hubId: string
  const publish = fakeReleasePublisher(() => dir.path)

  beforeEach(async () => {
    dir = tempDir('release-rollout-')
    storage = await openStorage({ dataDir: dir.path })
    sent = []
    const bus: HubBus = {
      async publish(agentId, _topic, payload) {
        sent.push({ agentId, payload })
      },
      async subscribe() {},
    }
    logged = []
    const logger = pino(
      { level: 'info' },
      { write: (line: string) => logged.push(JSON.parse(line) as { level: number; msg: string }) },
    )
    rollout = new ReleaseRollout({
      storage,
      bus,
      catalog: new ReleaseCatalog(path.join(dir.path, 'releases'), storage.servedCatalogs),
      logger,
      // Each test publishes and reports at once: every report reads the files.
      catalogMaxAgeMs: 0,
    })
    accountId = (await storage.accounts.create('Shop')).account_id
    hubId = (await storage.agents.insert({ account_id: accountId, name: 'hub' })).agent_id
  })
  afterEach(async () => {
    await storage.close()
    dir.remove()
  })

  const told = () => sent.map((s) => s.payload)
  /** As the dispatcher hands a state report on: stored first, then told with the hub as stored. */
  const report = async (agentId: string, reported: HubPayload<'state'>) => {
    const stored = await storage.agents.recordState(
      agentId,
      { version: reported.agent_version, lan: null },
      new Date().toISOString(),
    )
    if (stored) await rollout.stateReported(agentId, reported, stored)
  }

  it('nothing while no release is published', async () => {
    await report(hubId, state('1.0.0'))
    expect(told()).toEqual([])
  })

  it('a hub on another release than the current one is told to run it; one on it is not', async () => {
    await publish('1.0.0')
    await publish('1.1.0')
    await report(hubId, state('1.0.0'))
    await report(hubId, state('1.1.0'))
    expect(told()).toEqual([{ v: 1, command: 'run_release', version: '1.1.0' }])
    expect(sent[0]?.agentId).toBe(hubId)
  })

  it('pins: the hub’s before the account’s, the account’s before the catalog', async () => {
    await publish('1.0.0')
    await publish('1.1.0')
    await publish('1.2.0')
    await storage.releasePins.pinAccount(accountId, '1.1.0')
    await report(hubId, state('1.2.0'))
    await storage.releasePins.pinHub(hubId, '1.0.0')
    await report(hubId, state('1.2.0'))
    await storage.releasePins.pinHub(hubId, null)
    await storage.releasePins.pinAccount(accountId, null)
    await report(hubId, state('1.0.0'))
    expect(told().map((p) => (p as { version: string }).version)).toEqual(['1.1.0', '1.0.0', '1.2.0'])
  })

  it('records the hub’s update report; a failed version is not offered to that hub again', async () => {
    await publish('1.0.0')
    await publish('1.1.0')
    const failed: HubUpdate = {
      version: '1.1.0',
      status: 'failed',
      failure: 'installer_rejected',
      detail: 'SHA-256 differs',
      at: '2026-03-01T00:00:00.000Z',
    }
    await report(hubId, state('1.0.0', failed))
    expect((await storage.releasePins.forHub(hubId))?.update).toEqual(failed)
    expect(told()).toEqual([])
    // A newer release is offered all the same.
    await publish('1.2.0')
    await report(hubId, state('1.0.0', failed))
    expect(told()).toEqual([{ v: 1, command: 'run_release', version: '1.2.0' }])
  })

  it('a hub that does not say it can update itself is not told (a release from before self-updates)', async () => {
    await publish('1.0.0')
    await publish('1.1.0')
    await report(hubId, state('1.0.0', undefined, false))
    expect(told()).toEqual([])
  })

  it('a hub is told only a release with a tarball for its architecture (its host.arch, Node’s name)', async () => {
    await publish('1.0.0', ['amd64', 'arm64', 'armhf'])
    await publish('1.1.0', ['amd64'])
    await report(hubId, state('1.0.0'))
    expect(told()).toEqual([])
    await publish('1.2.0', ['arm64', 'armhf'])
    await report(hubId, state('1.0.0', undefined, true, 'arm'))
    await report(hubId, state('1.0.0', undefined, true, 'riscv64'))
    expect(told()).toEqual([{ v: 1, command: 'run_release', version: '1.2.0' }])
    // A pin on a release without its architecture is not sent either.
    await storage.releasePins.pinHub(hubId, '1.1.0')
    await report(hubId, state('1.2.0', undefined, true, 'arm'))
    expect(told()).toHaveLength(1)
  })

  it('an expired catalog is not rolled out (hubs would refuse it), and the cloud says so at error level once', async () => {
    const longAgo = new Date(Date.now() - 40 * 86_400_000)
    await publish('1.0.0', ['arm64'], { now: longAgo })
    await publish('1.1.0', ['arm64'], { now: longAgo })
    await report(hubId, state('1.0.0'))
    await report(hubId, state('1.0.0'))
    expect(told()).toEqual([])
    const expired = logged.filter((l) => l.msg.startsWith('release catalog expired'))
    expect(expired).toEqual([
      expect.objectContaining({
        level: 50,
        serial: 2,
        expires_at: new Date(longAgo.getTime() + 30 * 86_400_000).toISOString(),
        msg: 'release catalog expired: hubs refuse it and are not told to update; re-sign it (ota resign)',
      }),
    ])
    // Re-signed, it is rolled out again.
    await publish('1.2.0')
    await report(hubId, state('1.0.0'))
    expect(told()).toEqual([{ v: 1, command: 'run_release', version: '1.2.0' }])
  })

  it('a catalog close to its expiry is rolled out, with a warning once', async () => {
    await publish('1.0.0', ['arm64'], { expiresInDays: 3 })
    await report(hubId, state('0.9.0'))
    await report(hubId, state('0.9.0'))
    expect(told()).toHaveLength(2)
    expect(logged.filter((l) => l.msg.startsWith('release catalog expires'))).toEqual([
      expect.objectContaining({
        level: 40,
        serial: 1,
        msg: 'release catalog expires within 7 days: re-sign it (ota resign) or hubs stop updating',
      }),
    ])
  })

  it('a pin to a release withdrawn since is never sent: the hub follows the account’s pin or the catalog', async () => {
    await publish('1.0.0')
    await publish('1.1.0')
    await publish('1.2.0')
    await storage.releasePins.pinAccount(accountId, '1.1.0')
    await storage.releasePins.pinHub(hubId, '1.0.0')
    await withdrawRelease({ dataDir: dir.path, privateKeyPem: publish.privateKeyPem, version: '1.0.0' })
    await report(hubId, state('1.0.0'))
    await withdrawRelease({ dataDir: dir.path, privateKeyPem: publish.privateKeyPem, version: '1.1.0' })
    await report(hubId, state('1.1.0'))
    expect(told().map((p) => (p as { version: string }).version)).toEqual(['1.1.0', '1.2.0'])
  })

  it('an unknown hub is ignored', async () => {
    await publish('1.0.0')
    await report('00000000-0000-4000-8000-000000000000', state('0.9.0'))
    expect(told()).toEqual([])
  })
})
