import { describe, expect, it } from 'vitest'
import type { HubLanEndpoint } from '../../../protocol/hub-messages.ts'
import { ENGINES, storageForEachTest } from './engines.ts'

const ENDPOINT: HubLanEndpoint = {
  port: 8443,
  addresses: ['10.0.0.7', '2001:db8::7'],
  cert_sha256: '0f'.repeat(32),
  spki_sha256: `${'x'.repeat(43)}=`,
}

/** Whether a hub serves the print API on its LAN, and where it said it does, on both engines. */
describe.each(ENGINES)('the LAN API of hubs on %s', (engine) => {
  const t = storageForEachTest(engine)
  const shopWithHub = async () => {
    const accountId = (await t.storage.accounts.create('Shop')).account_id
    const agent = await t.storage.agents.insert({ account_id: accountId, name: 'hub' })
    return { accountId, agentId: agent.agent_id, agent }
  }

  it('is off by default', async () => {
    const { accountId, agentId, agent } = await shopWithHub()
    expect(agent.lan_api).toStrictEqual({ enabled: false, endpoint: null })
    expect((await t.storage.agents.findUnrevoked(accountId, agentId))?.lan_api).toStrictEqual({
      enabled: false,
      endpoint: null,
    })
    expect(await t.storage.agents.lanApiOf(agentId)).toStrictEqual({ account_id: accountId, enabled: false })
    expect(await t.storage.agents.lanChangesSince('2000-01-01T00:00:00.000Z')).toStrictEqual([])
  })

  it("is enabled and disabled per account: another account's hub, or a revoked one, is not found", async () => {
    const { accountId, agentId } = await shopWithHub()
    const other = await shopWithHub()
    const at = '2026-11-28T12:00:00.000Z'
    expect(await t.storage.agents.setLanApi(other.accountId, agentId, true, at)).toBeUndefined()
    expect((await t.storage.agents.lanApiOf(agentId))?.enabled).toBe(false)

    const enabled = await t.storage.agents.setLanApi(accountId, agentId, true, at)
    expect(enabled?.lan_api).toStrictEqual({ enabled: true, endpoint: null })
    expect(await t.storage.agents.lanChangesSince(at)).toStrictEqual([{ agent_id: agentId, at }])
    expect(await t.storage.agents.lanChangesSince('2026-11-28T12:00:00.001Z')).toStrictEqual([])
    const later = '2026-11-28T12:01:00.000Z'
    expect((await t.storage.agents.setLanApi(accountId, agentId, false, later))?.lan_api.enabled).toBe(false)
    expect(await t.storage.agents.lanChangesSince(at)).toStrictEqual([{ agent_id: agentId, at: later }])

    await t.storage.agents.revoke(agentId, new Date())
    expect(await t.storage.agents.setLanApi(accountId, agentId, true, later)).toBeUndefined()
  })

  it('records the endpoint of each state report, null when a report has none, shown as URLs', async () => {
    const { accountId, agentId } = await shopWithHub()
    const at = '2026-11-28T12:00:00.000Z'
    await t.storage.agents.recordState(agentId, { version: '1.0.0', lan: ENDPOINT }, at)
    expect((await t.storage.agents.findUnrevoked(accountId, agentId))?.lan_api).toStrictEqual({
      enabled: false,
      endpoint: {
        urls: ['https://10.0.0.7:8443/', 'https://[2001:db8::7]:8443/'],
        cert_sha256: ENDPOINT.cert_sha256,
        spki_sha256: ENDPOINT.spki_sha256,
      },
    })
    await t.storage.agents.recordState(agentId, { version: '1.0.0', lan: null }, at)
    expect((await t.storage.agents.list(accountId, 10))?.data[0]?.lan_api).toStrictEqual({
      enabled: false,
      endpoint: null,
    })
  })

  it('records the endpoints of hubs reporting together (one statement), each its own', async () => {
    const first = await shopWithHub()
    const second = await shopWithHub()
    const at = '2026-11-28T12:00:00.000Z'
    await Promise.all([
      t.storage.agents.recordState(first.agentId, { version: '1.0.0', lan: ENDPOINT }, at),
      t.storage.agents.recordState(second.agentId, { version: '1.0.0', lan: null }, at),
    ])
    expect((await t.storage.agents.findById(first.agentId))?.lan_api.endpoint?.cert_sha256).toBe(
      ENDPOINT.cert_sha256,
    )
    expect((await t.storage.agents.findById(second.agentId))?.lan_api.endpoint).toBeNull()
    await Promise.all([
      t.storage.agents.recordState(first.agentId, { version: '1.0.0', lan: null }, at),
      t.storage.agents.recordState(second.agentId, { version: '1.0.0', lan: null }, at),
    ])
    expect((await t.storage.agents.findById(first.agentId))?.lan_api.endpoint).toBeNull()
  })

  it('names a LAN-enabled hub when an API client of its account is made or revoked after it was enabled', async () => {
    const { accountId, agentId } = await shopWithHub()
    const disabled = await shopWithHub()
    await t.storage.apiClients.create(disabled.accountId, Buffer.alloc(32, 1), ['printers:read'])
    const enabledAt = new Date(Date.now() - 5000).toISOString()
    await t.storage.agents.setLanApi(accountId, agentId, true, enabledAt)
    const client = await t.storage.apiClients.create(accountId, Buffer.alloc(32, 2), ['printers:read'])
    const revoked = await t.storage.apiClients.revoke(client.client_id, new Date())
    const changes = await t.storage.agents.lanChangesSince(enabledAt)
    expect(changes.sort((a, b) => a.at.localeCompare(b.at))).toStrictEqual([
      { agent_id: agentId, at: enabledAt },
      { agent_id: agentId, at: client.created_at },
      { agent_id: agentId, at: revoked?.revoked_at },
    ])
  })
})
