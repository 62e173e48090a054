import type { MqttClient } from 'mqtt'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { connectHub, enroll, seedAccount, startFullCloud } from './hub-link.ts'

type FullCloud = Awaited<ReturnType<typeof startFullCloud>>

describe('the broker: hub identity and topic policy', () => {
  let full: FullCloud
  let hubA: { agent_id: string; credential: string }
  let hubB: { agent_id: string; credential: string }
  const clients: MqttClient[] = []

  beforeAll(async () => {
    full = await startFullCloud({ HUB_KEEPALIVE_SECONDS: '1' })
    hubA = await enroll(full.url, (await seedAccount(full.cloud, 'A')).enrollmentToken)
    hubB = await enroll(full.url, (await seedAccount(full.cloud, 'B')).enrollmentToken)
  })
  afterAll(async () => {
    for (const client of clients) client.end(true)
    await full.close()
  })

  const connect = async (hub: { agent_id: string; credential: string }, extra = {}) => {
    const client = await connectHub(full.mqttUrl, {
      clientId: hub.agent_id,
      username: hub.agent_id,
      password: hub.credential,
      ...extra,
    })
    clients.push(client)
    return client
  }

  it('accepts a hub with its agent id and credential', async () => {
    const client = await connect(hubA)
    expect(client.connected).toBe(true)
    client.end(true)
  })

  it.each([
    [
      'a wrong credential',
      (a: typeof hubA) => ({ clientId: a.agent_id, username: a.agent_id, password: 'hub_wrong' }),
    ],
    ['no credential', (a: typeof hubA) => ({ clientId: a.agent_id, username: a.agent_id })],
    [
      "another hub's id",
      (a: typeof hubA) => ({ clientId: a.agent_id, username: hubB.agent_id, password: a.credential }),
    ],
    [
      'a client id that is not its agent id',
      (a: typeof hubA) => ({ clientId: 'x', username: a.agent_id, password: a.credential }),
    ],
  ])('refuses %s', async (_what, options) => {
    await expect(connectHub(full.mqttUrl, options(hubA))).rejects.toThrow(
      /Bad username or password|Identifier rejected|Not authorized/i,
    )
  })

  it("never lets one hub subscribe to another hub's topics, nor use wildcards", async () => {
    const client = await connect(hubA)
    const own = await client.subscribeAsync(`hubs/${hubA.agent_id}/job-offer`, { qos: 1 })
    expect(own.map((g) => g.qos)).toEqual([1])
    for (const topic of [
      `hubs/${hubB.agent_id}/job-offer`,
      'hubs/+/job-offer',
      'hubs/#',
      '#',
      `hubs/${hubA.agent_id}/state`,
    ]) {
      // SUBACK 0x80 (MQTT 3.1.1 §3.9.3): mqtt.js rejects the subscription.
      await expect(client.subscribeAsync(topic, { qos: 1 })).rejects.toThrow('Subscribe error')
    }
    client.end(true)
  })

  it("disconnects a hub that publishes on another hub's topics, and the message goes nowhere", async () => {
    const client = await connect(hubA)
    const closed = new Promise<void>((resolve) => client.once('close', () => resolve()))
    client.publish(`hubs/${hubB.agent_id}/state`, '{}', { qos: 1 })
    await closed
    // Had the broker passed it on, the dispatcher would have handled it by now.
    await full.cloud.dispatcher.handled()
    const published = await full.cloud.storage.agents.findById(hubB.agent_id)
    expect(published?.version).toBeNull()
  })

  it('marks the agent online on connect and offline within a keepalive period of losing it', async () => {
    const session = 'session-1'
    const client = await connect(hubA, {
      keepalive: 1,
      will: {
        topic: `hubs/${hubA.agent_id}/presence`,
        payload: Buffer.from(JSON.stringify({ v: 1, online: false, session })),
        qos: 1,
        retain: false,
      },
    })
    await client.publishAsync(
      `hubs/${hubA.agent_id}/presence`,
      JSON.stringify({ v: 1, online: true, session }),
      { qos: 1 },
    )
    const online = async () => (await full.cloud.storage.agents.findById(hubA.agent_id))?.online
    await expect.poll(online, { timeout: 10_000, interval: 20 }).toBe(true)
    // Lose the hub without DISCONNECT: stop its keepalive pings and silence its socket.
    ;(client as unknown as { _clearPingTimer?: () => void })._clearPingTimer?.()
    client.stream.pause()
    ;(client.stream as unknown as { write: () => boolean }).write = () => true
    await expect.poll(online, { timeout: 5000, interval: 20 }).toBe(false)
    client.end(true)
  })
})
