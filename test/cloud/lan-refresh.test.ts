import type { MqttClient } from 'mqtt'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { HubLanEndpoint } from '../../protocol/hub-messages.ts'
import { cloudCli } from '../helpers/cli.ts'
import { connectHub, enroll, seedAccount, startFullCloud } from './hub-link.ts'

type FullCloud = Awaited<ReturnType<typeof startFullCloud>>

/** Waits on a busy machine are for a sign, not for time: the timeout only bounds a test that fails. */
const POLL = { timeout: 10_000, interval: 20 }

const ENDPOINT: HubLanEndpoint = {
  port: 8443,
  addresses: ['192.168.1.20', 'fe80::1'],
  cert_sha256: 'a'.repeat(64),
  spki_sha256: `${'B'.repeat(43)}=`,
}

describe('refresh_lan, and the LAN endpoint a hub reports, with an MQTT client standing in for a hub', () => {
  let full: FullCloud
  let seed: Awaited<ReturnType<typeof seedAccount>>
  let hub: { agent_id: string; credential: string }
  let client: MqttClient
  const commands: Record<string, unknown>[] = []
  const refreshes = () => commands.filter((c) => c.command === 'refresh_lan').length
  const cli = (args: string[]) => cloudCli(args, { DATA_DIR: full.dataDir })
  const publish = (topic: string, payload: object) =>
    client.publishAsync(`hubs/${hub.agent_id}/${topic}`, JSON.stringify({ v: 1, ...payload }), { qos: 1 })
  const state = (lan?: HubLanEndpoint) => ({
    agent_version: '9.9.9',
    host: { hostname: 'pi', platform: 'linux', arch: 'arm64' },
    printers: [],
    ...(lan && { lan }),
  })
  const listedAgent = async () => {
    const res = await fetch(`${full.url}/api/v1/agents`, {
      headers: { authorization: `Bearer ${seed.token}` },
    })
    const page = (await res.json()) as { data: { agent_id: string; lan_api: unknown }[] }
    return page.data.find((agent) => agent.agent_id === hub.agent_id)
  }

  beforeAll(async () => {
    full = await startFullCloud()
    seed = await seedAccount(full.cloud)
    hub = await enroll(full.url, seed.enrollmentToken)
    client = await connectHub(full.mqttUrl, {
      clientId: hub.agent_id,
      username: hub.agent_id,
      password: hub.credential,
    })
    client.on('message', (_topic, payload) => commands.push(JSON.parse(payload.toString())))
    await client.subscribeAsync(`hubs/${hub.agent_id}/command`, { qos: 1 })
  })
  afterAll(async () => {
    await client?.endAsync()
    await full?.close()
  })

  it('is off by default, and the account sees no endpoint', async () => {
    expect(await listedAgent()).toMatchObject({ lan_api: { enabled: false, endpoint: null } })
  })

  it('tells the hub when `hub lan enable` turns the LAN API on, and when `hub lan disable` turns it off', async () => {
    const before = refreshes()
    const enabled = await cli(['hub', 'lan', 'enable', hub.agent_id])
    expect([enabled.status, enabled.stderr]).toStrictEqual([0, ''])
    expect(JSON.parse(enabled.stdout)).toMatchObject({
      agent_id: hub.agent_id,
      account_id: seed.accountId,
      lan_api: { enabled: true, endpoint: null },
    })
    await expect.poll(refreshes, POLL).toBe(before + 1)
    expect(commands.at(-1)).toStrictEqual({ v: 1, command: 'refresh_lan' })

    const disabled = await cli(['hub', 'lan', 'disable', hub.agent_id])
    expect(JSON.parse(disabled.stdout)).toMatchObject({ lan_api: { enabled: false, endpoint: null } })
    await expect.poll(refreshes, POLL).toBe(before + 2)
  })

  it('tells a LAN-enabled hub when an API client of its account is made or revoked, and a disabled hub nothing', async () => {
    const made = await cli(['client', 'create', '--account', seed.accountId, '--scopes', 'print_jobs:write'])
    const clientId = JSON.parse(made.stdout).client_id as string
    // Disabled (the test before): a further check passes, and nothing comes.
    const before = refreshes()
    await new Promise((resolve) => setTimeout(resolve, 1500))
    expect(refreshes()).toBe(before)

    await cli(['hub', 'lan', 'enable', hub.agent_id])
    await expect.poll(refreshes, POLL).toBe(before + 1)
    const revoked = await cli(['client', 'revoke', '--id', clientId])
    expect(revoked.status).toBe(0)
    await expect.poll(refreshes, POLL).toBe(before + 2)
    await cli(['client', 'create', '--account', seed.accountId, '--scopes', 'printers:read'])
    await expect.poll(refreshes, POLL).toBe(before + 3)
    // Each change is told once.
    await new Promise((resolve) => setTimeout(resolve, 1500))
    expect(refreshes()).toBe(before + 3)
  })

  it("records the state report's LAN endpoint, shows it in GET /api/v1/agents, and clears it when a report has none", async () => {
    await publish('state', state(ENDPOINT))
    await expect
      .poll(async () => (await listedAgent())?.lan_api, POLL)
      .toStrictEqual({
        enabled: true,
        endpoint: {
          urls: ['https://192.168.1.20:8443/', 'https://[fe80::1]:8443/'],
          cert_sha256: ENDPOINT.cert_sha256,
          spki_sha256: ENDPOINT.spki_sha256,
        },
      })
    await publish('state', state())
    await expect
      .poll(async () => (await listedAgent())?.lan_api, POLL)
      .toStrictEqual({
        enabled: true,
        endpoint: null,
      })
  })
})
