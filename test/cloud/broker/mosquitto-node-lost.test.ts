import { randomUUID } from 'node:crypto'
import { writeFileSync } from 'node:fs'
import path from 'node:path'
import mqtt, { type MqttClient } from 'mqtt'
import { pino } from 'pino'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { SHARE_GROUP } from '../../../cloud/broker/mosquitto-config.ts'
import { Backoff } from '../../../hub/session/backoff.ts'
import { MqttSession } from '../../../hub/session/mqtt-session.ts'
import { hubTopic } from '../../../protocol/hub-messages.ts'
import { tempDir } from '../../helpers/temp-dir.ts'
import { enroll, seedAccount, startFullCloud } from '../hub-link.ts'
import { type CloudMosquitto, startCloudMosquitto } from './mosquitto-peer.ts'

/**
 * Issue 26 point 3: a cloud node that took a hub's presence from Mosquitto and died before recording it. The
 * broker acknowledged the presence to the hub and gives it to no other node (eclipse/mosquitto#2662), and no
 * node asks a hub to announce itself on its first connection. The hub announces itself again until a node says
 * it recorded it (protocol: `presence_recorded`), so the node that serves next brings it online.
 */
describe('a hub whose presence a dying node took', { timeout: 60_000 }, () => {
  const scratch = tempDir('mosquitto-node-lost-')
  let mosquitto: CloudMosquitto
  let env: Record<string, string>
  let node: Awaited<ReturnType<typeof startFullCloud>> | undefined
  let doomed: MqttClient | undefined
  let session: MqttSession | undefined

  beforeAll(async () => {
    mosquitto = await startCloudMosquitto()
    const passwordFile = path.join(scratch.path, 'cloud-password')
    writeFileSync(passwordFile, mosquitto.adminPassword, { mode: 0o600 })
    env = {
      DATA_DIR: path.join(scratch.path, 'data'),
      MQTT_URL: mosquitto.server.url,
      MQTT_ADMIN_PASSWORD_FILE: passwordFile,
    }
  }, 30_000)

  afterAll(async () => {
    await session?.stop()
    doomed?.end(true)
    await node?.close()
    await mosquitto?.server.stop()
    scratch.remove()
  })

  it('announces itself again until a node records it online', async () => {
    node = await startFullCloud(env)
    const seeded = await seedAccount(node.cloud)
    const enrolled = await enroll(node.url, seeded.enrollmentToken)
    await node.close()
    node = undefined

    // The only node: it takes the hub's presence (its MQTT client acknowledges it) and dies at once.
    const taken: string[] = []
    const client = await mqtt.connectAsync(mosquitto.server.url, {
      protocolVersion: 5,
      clientId: `cloud-doomed-${randomUUID()}`,
      username: mosquitto.adminUsername,
      password: mosquitto.adminPassword,
      reconnectPeriod: 0,
    })
    doomed = client
    client.on('message', (topic) => {
      taken.push(topic)
      client.stream.destroy()
    })
    await client.subscribeAsync(`$share/${SHARE_GROUP}/hubs/+/presence`, { qos: 1 })

    session = new MqttSession({
      mqttUrl: mosquitto.server.url,
      agentId: enrolled.agent_id,
      credential: enrolled.credential,
      keepaliveSeconds: 5,
      logger: pino({ level: 'silent' }),
      onConnected: () => {},
      onOffer: () => {},
      onCommand: () => {},
      backoff: new Backoff(50, 200),
      presenceConfirmMs: 300,
    })
    session.start()
    await expect.poll(() => taken, { timeout: 10_000 }).toEqual([hubTopic(enrolled.agent_id, 'presence')])

    // A new node serves; nothing recorded the hub online.
    node = await startFullCloud(env)
    const storage = node.cloud.storage
    await expect
      .poll(async () => (await storage.agents.findById(enrolled.agent_id))?.online, {
        timeout: 30_000,
        interval: 50,
      })
      .toBe(true)
  })
})
