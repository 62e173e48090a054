import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openStorage } from '../../cloud/storage/storage.ts'
import { cloudCli } from '../helpers/cli.ts'
import { tempDir } from '../helpers/temp-dir.ts'
import { ISO_DATE_TIME } from './api/api-helpers.ts'

describe('cloud CLI: hub lan enable|disable', () => {
  const dir = tempDir('cloud-cli-hub-lan-')
  const cli = (args: string[]) => cloudCli(args, { DATA_DIR: dir.path })
  let accountId: string
  let agentId: string

  beforeAll(async () => {
    accountId = JSON.parse((await cli(['account', 'create', '--name', 'Corner Bakery'])).stdout).account_id
    const storage = await openStorage({ dataDir: dir.path })
    try {
      agentId = (await storage.agents.insert({ account_id: accountId, name: 'Front desk' })).agent_id
    } finally {
      await storage.close()
    }
  })
  afterAll(() => dir.remove())

  const hub = (enabled: boolean) => ({
    agent_id: agentId,
    account_id: accountId,
    name: 'Front desk',
    online: false,
    last_seen_at: null,
    version: null,
    created_at: expect.stringMatching(ISO_DATE_TIME),
    lan_api: { enabled, endpoint: null },
  })

  it('is off by default, and enable and disable print the hub with its lan_api', async () => {
    expect(JSON.parse((await cli(['hub', 'show', '--id', agentId])).stdout)).toStrictEqual(hub(false))
    const on = await cli(['hub', 'lan', 'enable', agentId])
    expect([on.status, on.stderr]).toStrictEqual([0, ''])
    expect(JSON.parse(on.stdout)).toStrictEqual(hub(true))
    expect(JSON.parse((await cli(['hub', 'show', '--id', agentId])).stdout)).toStrictEqual(hub(true))
    const off = await cli(['hub', 'lan', 'disable', agentId])
    expect([off.status, JSON.parse(off.stdout)]).toStrictEqual([0, hub(false)])
  })

  it('names an unknown or revoked hub on stderr and exits 1', async () => {
    const unknown = await cli(['hub', 'lan', 'enable', 'no-such-hub'])
    expect(unknown).toStrictEqual({ status: 1, stdout: '', stderr: 'cloud: no hub no-such-hub\n' })
    const storage = await openStorage({ dataDir: dir.path })
    let revoked: string
    try {
      revoked = (await storage.agents.insert({ account_id: accountId, name: 'Gone' })).agent_id
      await storage.agents.revoke(revoked, new Date())
    } finally {
      await storage.close()
    }
    expect(await cli(['hub', 'lan', 'disable', revoked])).toStrictEqual({
      status: 1,
      stdout: '',
      stderr: `cloud: no hub ${revoked}\n`,
    })
  })

  it('refuses a command line without one AGENT_ID (exit 2), and has help', async () => {
    for (const args of [
      ['hub', 'lan', 'enable'],
      ['hub', 'lan', 'enable', agentId, 'another'],
      ['hub', 'lan', 'on', agentId],
    ]) {
      const result = await cli(args)
      expect(result.status, args.join(' ')).toBe(2)
      expect(result.stdout).toBe('')
    }
    expect((await cli(['hub', 'lan', 'enable'])).stderr).toContain(
      'cloud: give one AGENT_ID: cloud hub lan enable AGENT_ID',
    )
    const help = await cli(['hub', 'lan', 'disable', '--help'])
    expect(help.status).toBe(0)
    expect(help.stdout).toContain('cloud hub lan disable AGENT_ID')
  })
})
