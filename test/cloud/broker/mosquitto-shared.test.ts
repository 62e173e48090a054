import { randomUUID } from 'node:crypto'
import mqtt from 'mqtt'
import pino from 'pino'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { connectExternalBroker, type ExternalBroker } from '../../../cloud/broker/external-broker.ts'
import { hubTopic, PROTOCOL_VERSION } from '../../../protocol/hub-messages.ts'
import { type CloudMosquitto, startCloudMosquitto } from './mosquitto-peer.ts'

/**
 * Several cloud nodes on one Mosquitto share the hubs' messages (MQTT 5 shared subscriptions): each hub
 * message, the broker's last will included, is handled by exactly one node.
 */
const logger = pino({ level: 'silent' })
let mosquitto: CloudMosquitto
const nodes: ExternalBroker[] = []

function node(clientId: string) {
  return connectExternalBroker({
    url: mosquitto.server.url,
    username: mosquitto.adminUsername,
    password: mosquitto.adminPassword,
    clientId,
    logger,
    revokedSince: async () => [],
    revocationCheckMs: 60_000,
  })
}

beforeAll(async () => {
  mosquitto = await startCloudMosquitto()
}, 30_000)

afterAll(async () => {
  for (const each of nodes) await each.close()
  await mosquitto?.server.stop()
})

describe('cloud nodes on Mosquitto', () => {
  it('hand each hub message to exactly one node, and the will of a lost hub too', async () => {
    const seen: { node: string; agentId: string; session: string; online: boolean }[] = []
    for (const name of ['a', 'b']) {
      const each = await node(`cloud-test-${name}-${randomUUID()}`)
      nodes.push(each)
      await each.bus.subscribe('presence', (agentId, presence) => {
        seen.push({ node: name, agentId, session: presence.session, online: presence.online })
      })
      expect(each.ready()).toBe(true)
    }
    const agentId = randomUUID()
    const credential = `hub_${randomUUID()}`
    await nodes[0]!.provisionHub(agentId, credential)
    const hub = await mqtt.connectAsync(mosquitto.server.url, {
      clientId: agentId,
      username: agentId,
      password: credential,
      reconnectPeriod: 0,
      will: {
        topic: hubTopic(agentId, 'presence'),
        payload: Buffer.from(JSON.stringify({ v: PROTOCOL_VERSION, online: false, session: 'will' })),
        qos: 1,
        retain: false,
      },
    })
    const count = 40
    for (let i = 0; i < count; i++) {
      const presence = { v: PROTOCOL_VERSION, online: true, session: `s${i}` }
      await hub.publishAsync(hubTopic(agentId, 'presence'), JSON.stringify(presence), { qos: 1 })
    }
    await expect.poll(() => seen.length).toBe(count)
    expect(new Set(seen.map((m) => m.session)).size).toBe(count)
    // Both nodes took a share: the broker spreads the group's messages.
    expect(new Set(seen.map((m) => m.node))).toEqual(new Set(['a', 'b']))
    // A lost connection (no DISCONNECT): the broker publishes the will, which one node handles.
    hub.stream.destroy()
    await expect.poll(() => seen.filter((m) => m.session === 'will')).toHaveLength(1)
    expect(seen.find((m) => m.session === 'will')).toMatchObject({ agentId, online: false })
  })

  it('gives every message to the nodes that remain when one leaves', async () => {
    const seen: string[] = []
    const a = await node(`cloud-test-a-${randomUUID()}`)
    const b = await node(`cloud-test-b-${randomUUID()}`)
    for (const each of [a, b])
      await each.bus.subscribe('job-ack', (_agentId, ack) => void seen.push(ack.print_job_id))
    nodes.push(b)
    await a.close()
    const agentId = randomUUID()
    const credential = `hub_${randomUUID()}`
    await b.provisionHub(agentId, credential)
    const hub = await mqtt.connectAsync(mosquitto.server.url, {
      clientId: agentId,
      username: agentId,
      password: credential,
      reconnectPeriod: 0,
    })
    const ids = Array.from({ length: 10 }, () => randomUUID())
    for (const id of ids) {
      const ack = { v: PROTOCOL_VERSION, print_job_id: id, at: new Date().toISOString() }
      await hub.publishAsync(hubTopic(agentId, 'job-ack'), JSON.stringify(ack), { qos: 1 })
    }
    await expect.poll(() => seen.length).toBe(ids.length)
    expect(seen.sort()).toEqual([...ids].sort())
    await hub.endAsync()
  })

  it('hands every message to exactly one node when one leaves while hubs publish (a node stopped with SIGTERM)', async () => {
    const seen = new Map<string, string[]>()
    const a = await node(`cloud-test-a-${randomUUID()}`)
    const b = await node(`cloud-test-b-${randomUUID()}`)
    nodes.push(b)
    // A topic of its own: the nodes of the tests above still take their shares of theirs.
    for (const [name, each] of [
      ['a', a],
      ['b', b],
    ] as const)
      await each.bus.subscribe('job-waiting', async (_agentId, report) => {
        // A handler that takes a while, as one that writes to the database does.
        await new Promise((resolve) => setTimeout(resolve, 5))
        seen.set(report.print_job_id, [...(seen.get(report.print_job_id) ?? []), name])
      })
    const agentId = randomUUID()
    const credential = `hub_${randomUUID()}`
    await b.provisionHub(agentId, credential)
    const hub = await mqtt.connectAsync(mosquitto.server.url, {
      clientId: agentId,
      username: agentId,
      password: credential,
      reconnectPeriod: 0,
    })
    const ids = Array.from({ length: 2000 }, () => randomUUID())
    const published = Promise.all(
      ids.map((id) =>
        hub.publishAsync(
          hubTopic(agentId, 'job-waiting'),
          JSON.stringify({
            v: PROTOCOL_VERSION,
            print_job_id: id,
            reason: null,
            at: new Date().toISOString(),
          }),
          { qos: 1 },
        ),
      ),
    )
    // A leaves in the middle of the stream: what it had been sent it handles, the rest goes to B.
    await expect.poll(() => [...seen.values()].filter((by) => by.includes('a')).length).toBeGreaterThan(50)
    await a.leave()
    expect(a.ready()).toBe(false)
    await a.close()
    await published
    await expect.poll(() => seen.size, { timeout: 20_000 }).toBe(ids.length)
    expect([...seen.values()].filter((by) => by.length !== 1)).toEqual([])
    expect(new Set([...seen.values()].flat())).toEqual(new Set(['a', 'b']))
    await hub.endAsync()
  })
})
