import { once } from 'node:events'
import { connect, type Socket } from 'node:net'
import mqtt, { type IClientOptions, type MqttClient } from 'mqtt'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { HubState } from '../../protocol/hub-messages.ts'
import { connectHeader } from '../helpers/mqtt-packets.ts'
import { connectHub, enroll, seedAccount, startFullCloud } from './hub-link.ts'
import { RECEIPT_PRINTER } from './test-cloud.ts'

type FullCloud = Awaited<ReturnType<typeof startFullCloud>>
type Hub = { agent_id: string; credential: string }

const MiB = 1024 * 1024

/** A raw TCP connection to the broker that records when the broker closes it. */
async function rawClient(port: number) {
  const socket = connect({ host: '127.0.0.1', port })
  socket.on('error', () => {})
  const closed = new Promise<boolean>((resolve) => socket.once('close', () => resolve(true)))
  await once(socket, 'connect')
  return { socket, closed }
}

/** Writes `chunk` until `total` bytes went out or the peer closed; resolves with the bytes written. */
async function stream(socket: Socket, closed: Promise<boolean>, chunk: Buffer, total: number) {
  let written = 0
  let isClosed = false
  void closed.then(() => {
    isClosed = true
  })
  while (written < total && !isClosed && !socket.destroyed) {
    written += chunk.length
    if (!socket.write(chunk)) await Promise.race([once(socket, 'drain').catch(() => {}), closed])
  }
  return written
}

/** A valid state message with `count` printers, each with a 200-character name. */
function stateWith(count: number, agentVersion: string): HubState {
  return {
    v: 1,
    agent_version: agentVersion,
    host: { hostname: 'test-hub', platform: 'linux', arch: 'arm64' },
    printers: Array.from({ length: count }, (_, i) => ({
      key: `socket://10.0.0.${i}:9100`,
      name: 'n'.repeat(200),
      uri: `socket://10.0.0.${i}:9100`,
      languages: ['escpos'],
      capabilities: RECEIPT_PRINTER,
      health: { state: 'ready', reasons: [], checked_at: new Date().toISOString() },
    })),
  }
}

function mqttUrl(full: FullCloud) {
  return `mqtt://127.0.0.1:${full.cloud.broker.port}`
}

describe('the MQTT listener bounds what a client can make it hold', () => {
  let full: FullCloud
  let hub: Hub
  let accountId: string
  let sentinelHub: Hub
  const clients: MqttClient[] = []
  const sockets: Socket[] = []

  beforeAll(async () => {
    full = await startFullCloud({
      MQTT_PORT: '0',
      MQTT_MAX_PACKET_BYTES: String(64 * 1024),
      MQTT_MAX_PENDING_CONNECTIONS: '4',
      MQTT_CONNECT_TIMEOUT_MS: '1000',
    })
    const seeded = await seedAccount(full.cloud, 'Limits')
    accountId = seeded.accountId
    hub = await enroll(full.url, seeded.enrollmentToken)
    sentinelHub = await enroll(full.url, (await seedAccount(full.cloud, 'Sentinel')).enrollmentToken)
  })
  afterAll(async () => {
    for (const client of clients) client.end(true)
    for (const socket of sockets) socket.destroy()
    await full.close()
  })

  /** Connects as the hub; 'closed' when the broker closes the connection instead of answering CONNACK. */
  const connectOrClose = (as: Hub, extra: { will?: IClientOptions['will'] } = {}) =>
    new Promise<'connected' | 'closed'>((resolve) => {
      const client = mqtt.connect(mqttUrl(full), {
        clientId: as.agent_id,
        username: as.agent_id,
        password: as.credential,
        reconnectPeriod: 0,
        ...extra,
      })
      clients.push(client)
      client.on('error', () => {})
      client.once('connect', () => resolve('connected'))
      client.once('close', () => resolve('closed'))
    })

  const connectAsHub = async () => {
    const client = await connectHub(mqttUrl(full), {
      clientId: hub.agent_id,
      username: hub.agent_id,
      password: hub.credential,
    })
    clients.push(client)
    return client
  }

  it('drops a client that announces a 256 MiB CONNECT, and holds none of what it streams', async () => {
    const { socket, closed } = await rawClient(full.cloud.broker.port)
    sockets.push(socket)
    const before = process.memoryUsage()
    // 256 MiB - 1 is the largest Remaining Length MQTT 3.1.1 §2.2.3 can express.
    socket.write(connectHeader(256 * MiB - 1))
    const written = await stream(socket, closed, Buffer.alloc(64 * 1024, 0x61), 64 * MiB)
    const after = process.memoryUsage()
    expect(await closed).toBe(true)
    expect(written).toBeLessThan(64 * MiB)
    expect(after.arrayBuffers - before.arrayBuffers).toBeLessThan(16 * MiB)
    expect(after.rss - before.rss).toBeLessThan(16 * MiB)
  })

  it('refuses a CONNECT over the pre-CONNACK limit, even with good credentials, and never handles it', async () => {
    // A valid presence will (`online: true`), padded past 4 KiB: were the CONNECT handled, the broker would
    // publish it when the connection closes and the cloud would show the hub online.
    const will = `${JSON.stringify({ v: 1, online: true, session: 'oversize' })}${' '.repeat(5 * 1024)}`
    const outcome = await connectOrClose(hub, {
      will: { topic: `hubs/${hub.agent_id}/presence`, payload: Buffer.from(will), qos: 1, retain: false },
    })
    expect(outcome).toBe('closed')
    // A sentinel: another hub's presence, sent after the refusal, is recorded.
    const other = await connectOrClose(sentinelHub)
    expect(other).toBe('connected')
    const client = clients.at(-1) as MqttClient
    await client.publishAsync(
      `hubs/${sentinelHub.agent_id}/presence`,
      JSON.stringify({ v: 1, online: true, session: 'sentinel' }),
      { qos: 1 },
    )
    await expect
      .poll(async () => (await full.cloud.storage.agents.findById(sentinelHub.agent_id))?.online)
      .toBe(true)
    expect((await full.cloud.storage.agents.findById(hub.agent_id))?.online).toBe(false)
    client.end(true)
  })

  it('drops an authenticated hub that sends a packet over MQTT_MAX_PACKET_BYTES, and never handles it', async () => {
    const client = await connectAsHub()
    const topic = `hubs/${hub.agent_id}/state`
    // Under the limit: the broker takes it (the cloud drops the invalid payload, not the connection).
    await client.publishAsync(topic, Buffer.alloc(60 * 1024, 0x20), { qos: 1 })
    expect(client.connected).toBe(true)
    // Over it: a valid state of 120 printers (about 80 KiB).
    const big = JSON.stringify(stateWith(120, 'big'))
    expect(Buffer.byteLength(big)).toBeGreaterThan(64 * 1024)
    const closed = new Promise<void>((resolve) => client.once('close', () => resolve()))
    client.publish(topic, big, { qos: 1 })
    await closed
    // A sentinel: a small state after reconnecting. Once it is recorded, the big one would have been too.
    const again = await connectAsHub()
    await again.publishAsync(topic, JSON.stringify(stateWith(1, 'small')), { qos: 1 })
    await expect
      .poll(async () => (await full.cloud.storage.agents.findById(hub.agent_id))?.version)
      .toBe('small')
    // Its printer is written after its version (with other hubs' reports, batched); a report never removes
    // printers, so the big state's 120 would still be listed.
    await expect
      .poll(async () => (await full.cloud.storage.printers.list(accountId, 100))?.data.length)
      .toBe(1)
    again.end(true)
  })

  it('closes connections beyond MQTT_MAX_PENDING_CONNECTIONS at once; a hub connects once they are gone', async () => {
    const pending = await Promise.all([1, 2, 3, 4].map(() => rawClient(full.cloud.broker.port)))
    sockets.push(...pending.map((p) => p.socket))
    // A sign that the broker has accepted the four: a fifth raw client is closed without sending anything.
    const extra = await rawClient(full.cloud.broker.port)
    sockets.push(extra.socket)
    expect(await extra.closed).toBe(true)
    // The four are dropped by the connect timeout (MQTT_CONNECT_TIMEOUT_MS), since none sent CONNECT.
    for (const p of pending) expect(await p.closed).toBe(true)
    const client = await connectAsHub()
    expect(client.connected).toBe(true)
    // An authenticated hub no longer counts as pending: four raw clients fit beside it again.
    const again = await Promise.all([1, 2, 3, 4].map(() => rawClient(full.cloud.broker.port)))
    sockets.push(...again.map((p) => p.socket))
    const sentinel = await rawClient(full.cloud.broker.port)
    sockets.push(sentinel.socket)
    expect(await sentinel.closed).toBe(true)
    for (const p of again) {
      expect(await Promise.race([p.closed, Promise.resolve(false)])).toBe(false)
      p.socket.destroy()
    }
  })
})
