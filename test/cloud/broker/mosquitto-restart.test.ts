import { randomUUID } from 'node:crypto'
import { writeFileSync } from 'node:fs'
import path from 'node:path'
import { pino } from 'pino'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Backoff } from '../../../hub/session/backoff.ts'
import { MqttSession } from '../../../hub/session/mqtt-session.ts'
import { startTcpProxy, type TcpProxy } from '../../helpers/tcp-proxy.ts'
import { tempDir } from '../../helpers/temp-dir.ts'
import { enroll, seedAccount, startFullCloud } from '../hub-link.ts'
import { type CloudMosquitto, startCloudMosquitto } from './mosquitto-peer.ts'

/**
 * After a Mosquitto restart a hub that reconnects before the node has subscribed again publishes its presence
 * to no one. The node
 * asks every hub to announce itself once it is subscribed again (protocol: `announce`), and the hub's real
 * MQTT session answers with its presence. The node reaches Mosquitto through a relay held down while the
 * broker restarts, so that the hub is back first, as it is with thousands of hubs.
 */
describe('a Mosquitto restart', { timeout: 60_000 }, () => {
  const scratch = tempDir('mosquitto-restart-')
  let mosquitto: CloudMosquitto
  let relay: TcpProxy
  let node: Awaited<ReturnType<typeof startFullCloud>>
  let session: MqttSession | undefined

  beforeAll(async () => {
    mosquitto = await startCloudMosquitto()
    relay = await startTcpProxy(mosquitto.server.port)
    const passwordFile = path.join(scratch.path, 'cloud-password')
    writeFileSync(passwordFile, mosquitto.adminPassword, { mode: 0o600 })
    node = await startFullCloud({
      MQTT_URL: `mqtt://127.0.0.1:${relay.port}`,
      MQTT_ADMIN_PASSWORD_FILE: passwordFile,
      MQTT_CLIENT_ID: `cloud-restart-${randomUUID()}`,
    })
  }, 60_000)

  afterAll(async () => {
    await session?.stop()
    await node?.close()
    await relay?.close()
    await mosquitto?.server.stop()
    scratch.remove()
  })

  /** Waits on a busy machine are for a sign, not for time: the timeout only bounds a test that fails. */
  const POLL = { timeout: 30_000, interval: 25 }

  it('ends with the hub online: the node asks every hub to announce itself once it is subscribed again', async () => {
    const seeded = await seedAccount(node.cloud)
    const enrolled = await enroll(node.url, seeded.enrollmentToken)
    const agentId = enrolled.agent_id
    const online = async () => (await node.cloud.storage.agents.findById(agentId))?.online === true
    let connects = 0
    session = new MqttSession({
      mqttUrl: mosquitto.server.url,
      agentId,
      credential: enrolled.credential,
      keepaliveSeconds: 5,
      logger: pino({ level: 'silent' }),
      onConnected: () => {
        connects++
      },
      onOffer: () => {},
      onCommand: () => {},
      backoff: new Backoff(50, 200),
    })
    session.start()
    await expect.poll(online, POLL).toBe(true)

    // The node is away; the broker restarts; the hub is back and says so, to no one.
    relay.setDown(true)
    relay.cutAll()
    await expect.poll(() => node.cloud.broker.ready(), POLL).toBe(false)
    await mosquitto.server.restart()
    await expect.poll(() => connects, POLL).toBeGreaterThanOrEqual(2)
    // What the hub's last will did when its connection dropped (the node that got it recorded it).
    await node.cloud.storage.hubPresence.markOffline(agentId, null, new Date().toISOString())
    expect(await online()).toBe(false)

    relay.setDown(false)
    await expect.poll(() => node.cloud.broker.ready(), POLL).toBe(true)
    await expect.poll(online, POLL).toBe(true)
    expect(connects).toBeGreaterThanOrEqual(3)
  })
})
