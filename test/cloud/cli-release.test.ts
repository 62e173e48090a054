import { generateKeyPairSync } from 'node:crypto'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openStorage } from '../../cloud/storage/storage.ts'
import { publishRelease } from '../../ota/publish.ts'
import { withdrawRelease } from '../../ota/resign.ts'
import { cloudCli } from '../helpers/cli.ts'
import { writeFakeBuild } from '../helpers/fake-release.ts'
import { tempDir } from '../helpers/temp-dir.ts'

describe('cloud CLI: release pin, unpin and status', () => {
  const dir = tempDir('cloud-cli-release-')
  const DATA_DIR = dir.path
  const cli = (args: string[]) => cloudCli(args, { DATA_DIR })
  const json = async (args: string[]) => {
    const result = await cli(args)
    expect(result.stderr).toBe('')
    expect(result.status).toBe(0)
    return JSON.parse(result.stdout)
  }
  let accountId: string
  let hubId: string

  beforeAll(async () => {
    accountId = (await json(['account', 'create', '--name', 'Corner Bakery'])).account_id
    const storage = await openStorage({ dataDir: DATA_DIR })
    try {
      hubId = (await storage.agents.insert({ account_id: accountId, name: 'Front desk', version: '1.0.0' }))
        .agent_id
    } finally {
      await storage.close()
    }
  })
  afterAll(async () => dir.remove())

  it('refuses to pin before any release is published', async () => {
    const result = await cli(['release', 'pin', '--account', accountId, '--version', '1.0.0'])
    expect(result.status).toBe(1)
    expect(result.stderr).toMatch(/^cloud: no catalog to pin from: no release has been published\n$/)
  })

  const privateKeyPem = generateKeyPairSync('ed25519')
    .privateKey.export({ type: 'pkcs8', format: 'pem' })
    .toString()
  const publish = async () => {
    for (const version of ['1.0.0', '1.1.0', '1.2.0'])
      await publishRelease({
        fromDir: writeFakeBuild(path.join(DATA_DIR, `build-${version}`), version, [
          { arch: 'arm64', size: 64 },
        ]),
        dataDir: DATA_DIR,
        privateKeyPem,
        withoutBootTest: 'a fake build',
      })
  }
  const status = async () => await json(['release', 'status', '--hub', hubId])

  it('status: without pins, the catalog’s current release', async () => {
    await publish()
    expect(await status()).toEqual({
      agent_id: hubId,
      account_id: accountId,
      version: '1.0.0',
      release: '1.2.0',
      release_source: 'catalog',
      account_pin: null,
      hub_pin: null,
      update: null,
    })
  })

  it('an account pin, then a hub pin before it', async () => {
    expect(await json(['release', 'pin', '--account', accountId, '--version', '1.1.0'])).toEqual({
      account_id: accountId,
      release_pin: '1.1.0',
    })
    expect(await status()).toMatchObject({
      release: '1.1.0',
      release_source: 'account_pin',
      account_pin: '1.1.0',
    })
    expect(await json(['release', 'pin', '--hub', hubId, '--version', '1.0.0'])).toEqual({
      agent_id: hubId,
      release_pin: '1.0.0',
    })
    expect(await status()).toMatchObject({ release: '1.0.0', release_source: 'hub_pin', hub_pin: '1.0.0' })
  })

  it('unpinned, the hub follows the catalog again', async () => {
    expect(await json(['release', 'unpin', '--hub', hubId])).toEqual({ agent_id: hubId, release_pin: null })
    expect(await json(['release', 'unpin', '--account', accountId])).toEqual({
      account_id: accountId,
      release_pin: null,
    })
    expect(await status()).toMatchObject({
      release: '1.2.0',
      release_source: 'catalog',
      account_pin: null,
      hub_pin: null,
    })
  })

  it('refuses a version the catalog does not list, a malformed one, an unknown target, and both targets at once', async () => {
    const unknown = await cli(['release', 'pin', '--hub', hubId, '--version', '9.9.9'])
    expect(unknown.status).toBe(1)
    expect(unknown.stderr).toBe('cloud: the catalog has no release 9.9.9 (it has 1.2.0, 1.1.0, 1.0.0)\n')
    const malformed = await cli(['release', 'pin', '--hub', hubId, '--version', '1.2'])
    expect(malformed.status).toBe(2)
    expect(malformed.stderr).toMatch(/^cloud: --version must be X\.Y\.Z \(got "1\.2"\)\n/)
    const noHub = await cli(['release', 'pin', '--hub', 'nope', '--version', '1.0.0'])
    expect(noHub.status).toBe(1)
    expect(noHub.stderr).toBe('cloud: no hub nope\n')
    const both = await cli(['release', 'unpin', '--hub', hubId, '--account', accountId])
    expect(both.status).toBe(2)
    expect(both.stderr).toMatch(/^cloud: give either --account ACCOUNT_ID or --hub HUB_ID\n/)
    expect((await cli(['release', 'status', '--hub', 'nope'])).stderr).toBe('cloud: no hub nope\n')
  })

  it('refuses a pin to a withdrawn release or one below the floor; a pin withdrawn since is passed over', async () => {
    expect(await json(['release', 'pin', '--hub', hubId, '--version', '1.1.0'])).toEqual({
      agent_id: hubId,
      release_pin: '1.1.0',
    })
    await withdrawRelease({ dataDir: DATA_DIR, privateKeyPem, below: '1.1.0' })
    await withdrawRelease({ dataDir: DATA_DIR, privateKeyPem, version: '1.1.0' })
    const withdrawn = await cli(['release', 'pin', '--account', accountId, '--version', '1.1.0'])
    expect(withdrawn.status).toBe(1)
    expect(withdrawn.stderr).toBe(
      'cloud: release 1.1.0 was withdrawn by the release key: hubs may not run it (the catalog has 1.2.0)\n',
    )
    const belowFloor = await cli(['release', 'pin', '--hub', hubId, '--version', '0.9.0'])
    expect(belowFloor.status).toBe(1)
    expect(belowFloor.stderr).toBe(
      'cloud: release 0.9.0 is below the catalog’s floor 1.1.0: hubs may not run it\n',
    )
    expect(await status()).toMatchObject({ release: '1.2.0', release_source: 'catalog', hub_pin: '1.1.0' })
  })
})
