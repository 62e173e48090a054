import { randomUUID } from 'node:crypto'
import mqtt, { type MqttClient } from 'mqtt'
import pino from 'pino'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { connectExternalBroker, type ExternalBroker } from '../../../cloud/broker/external-broker.ts'
import { hubTopic, PROTOCOL_VERSION } from '../../../protocol/hub-messages.ts'
import { type CloudMosquitto, startCloudMosquitto } from './mosquitto-peer.ts'

/**
 * Per-hub authentication and the `hubs/<own id>/…` rule enforced by a real Mosquitto 2.0 with the
 * dynamic-security plugin, as the cloud provisions it (cloud/broker/dynsec.ts).
 */
const logger = pino({ level: 'silent' })
let mosquitto: CloudMosquitto
let cloud: ExternalBroker
const revoked: { agent_id: string; revoked_at: string }[] = []
const clients: MqttClient[] = []

function connectHub(
  agentId: string,
  credential: string,
  extra: mqtt.IClientOptions = {},
): Promise<MqttClient> {
  return new Promise((resolve, reject) => {
    const client = mqtt.connect(mosquitto.server.url, {
      clientId: agentId,
      username: agentId,
      password: credential,
      clean: true,
      reconnectPeriod: 0,
      connectTimeout: 5000,
      ...extra,
    })
    clients.push(client)
    client.once('connect', () => resolve(client))
    client.once('error', (error) => {
      client.end(true)
      reject(error)
    })
  })
}

async function provisioned() {
  const agentId = randomUUID()
  const credential = `hub_${randomUUID()}`
  await cloud.provisionHub(agentId, credential)
  return { agentId, credential }
}

beforeAll(async () => {
  mosquitto = await startCloudMosquitto()
  cloud = await connectExternalBroker({
    url: mosquitto.server.url,
    username: mosquitto.adminUsername,
    password: mosquitto.adminPassword,
    clientId: `cloud-test-${randomUUID()}`,
    logger,
    revokedSince: async () => revoked,
    revocationCheckMs: 100,
  })
}, 30_000)

afterAll(async () => {
  for (const client of clients) client.end(true)
  await cloud?.close()
  await mosquitto?.server.stop()
})

describe('Mosquitto with the dynamic-security plugin', () => {
  it('lets a provisioned hub in with its credential only, and only with its agent id as client id', async () => {
    const hub = await provisioned()
    await expect(connectHub(hub.agentId, 'hub_wrong')).rejects.toThrow()
    await expect(connectHub(hub.agentId, hub.credential, { clientId: 'someone-else' })).rejects.toThrow()
    await expect(connectHub(randomUUID(), hub.credential)).rejects.toThrow()
    const client = await connectHub(hub.agentId, hub.credential)
    expect(client.connected).toBe(true)
    // Provisioning again (every connection lookup) keeps it as it is.
    await cloud.provisionHub(hub.agentId, hub.credential)
    client.end(true)
  })

  it('grants a hub its own topics and refuses other hubs’ topics and wildcards (SUBACK 0x80)', async () => {
    const a = await provisioned()
    const b = await provisioned()
    const client = await connectHub(a.agentId, a.credential)
    const own = await client.subscribeAsync(
      [hubTopic(a.agentId, 'job-offer'), hubTopic(a.agentId, 'command')],
      { qos: 1 },
    )
    expect(own.map((grant) => grant.qos)).toEqual([1, 1])
    const forbidden = [
      hubTopic(b.agentId, 'job-offer'),
      hubTopic(b.agentId, 'command'),
      `hubs/${a.agentId}/#`,
      `hubs/${a.agentId}/+`,
      'hubs/#',
      'hubs/+/job-offer',
      '#',
      '+/+/+',
      hubTopic(a.agentId, 'state'),
      '$CONTROL/dynamic-security/#',
      '$share/print-hub-cloud/hubs/+/state',
    ]
    for (const topic of forbidden) {
      // SUBACK return code 0x80, failure (MQTT 3.1.1 §3.9.3): mqtt.js rejects with the packet.
      await expect(client.subscribeAsync(topic, { qos: 1 }), topic).rejects.toMatchObject({
        packet: { granted: [128] },
      })
    }
    client.end(true)
  })

  it('does not deliver what a hub publishes to another hub’s topics or the cloud’s own', async () => {
    const a = await provisioned()
    const b = await provisioned()
    const victim = await connectHub(b.agentId, b.credential)
    const received: string[] = []
    victim.on('message', (topic) => received.push(topic))
    await victim.subscribeAsync([hubTopic(b.agentId, 'job-offer'), hubTopic(b.agentId, 'command')], {
      qos: 1,
    })
    const seenByCloud: string[] = []
    await cloud.bus.subscribe('state', (agentId) => {
      seenByCloud.push(agentId)
    })
    const attacker = await connectHub(a.agentId, a.credential, { protocolVersion: 5 })
    const body = JSON.stringify({ v: PROTOCOL_VERSION, command: 'refresh_state' })
    // MQTT 5 brokers answer a refused QoS 1 publish with a PUBACK reason code ≥ 0x80 (§3.4.2.1).
    await expect(attacker.publishAsync(hubTopic(b.agentId, 'command'), body, { qos: 1 })).rejects.toThrow()
    await expect(attacker.publishAsync(hubTopic(b.agentId, 'state'), '{}', { qos: 1 })).rejects.toThrow()
    // Sentinel: the cloud's own message to b arrives after whatever a's publishes could have caused.
    await cloud.bus.publish(b.agentId, 'command', { v: PROTOCOL_VERSION, command: 'refresh_state' })
    await expect.poll(() => received).toEqual([hubTopic(b.agentId, 'command')])
    expect(seenByCloud).not.toContain(b.agentId)
  })

  it('disconnects a revoked hub and refuses it afterwards', async () => {
    const hub = await provisioned()
    const client = await connectHub(hub.agentId, hub.credential)
    const closed = new Promise<void>((resolve) => client.once('close', () => resolve()))
    revoked.push({ agent_id: hub.agentId, revoked_at: new Date().toISOString() })
    await closed
    await expect(connectHub(hub.agentId, hub.credential)).rejects.toThrow()
  })
})
