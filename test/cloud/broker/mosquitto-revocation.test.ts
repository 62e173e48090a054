import { randomUUID } from 'node:crypto'
import { existsSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import type { MqttClient } from 'mqtt'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DATABASE_FILE } from '../../../cloud/storage/storage.ts'
import { hubTopic, PROTOCOL_VERSION } from '../../../protocol/hub-messages.ts'
import { testDatabases } from '../../helpers/postgres-server.ts'
import { tempDir } from '../../helpers/temp-dir.ts'
import { connectHub, enroll, seedAccount, startFullCloud } from '../hub-link.ts'
import { RECEIPT_PRINTER } from '../test-cloud.ts'
import { type CloudMosquitto, startCloudMosquitto } from './mosquitto-peer.ts'

/**
 * On an external Mosquitto a revoked hub's session is closed by deleting its broker client, and Mosquitto
 * publishes no last will for a client the dynamic-security plugin kicks (measured on 2.0.11). Presence must
 * still end offline, whichever of the nodes sharing the database notices the revocation first.
 */
type FullCloud = Awaited<ReturnType<typeof startFullCloud>>

describe('a hub revoked on an external broker', { timeout: 60_000 }, () => {
  const scratch = tempDir('revoked-presence-')
  const databases = testDatabases()
  let mosquitto: CloudMosquitto
  const nodes: FullCloud[] = []
  let hub: MqttClient | undefined

  beforeAll(async () => {
    mosquitto = await startCloudMosquitto()
    const passwordFile = path.join(scratch.path, 'cloud-password')
    writeFileSync(passwordFile, mosquitto.adminPassword, { mode: 0o600 })
    const databaseUrl = await databases.migrated()
    for (const name of ['a', 'b'])
      nodes.push(
        await startFullCloud({
          DATABASE_URL: databaseUrl,
          MQTT_URL: mosquitto.server.url,
          MQTT_ADMIN_PASSWORD_FILE: passwordFile,
          MQTT_CLIENT_ID: `cloud-revocation-${name}-${randomUUID()}`,
        }),
      )
  }, 60_000)

  afterAll(async () => {
    hub?.end(true)
    for (const node of nodes) await node.close()
    await mosquitto?.server.stop()
    scratch.remove()
  })

  it('leaves the SQLite file alone: the embedded broker’s lookups are not opened', () => {
    for (const node of nodes) expect(existsSync(path.join(node.dataDir, DATABASE_FILE))).toBe(false)
  })

  it('is shown offline with its printers on every node once its broker client is deleted', async () => {
    const [a, b] = nodes as [FullCloud, FullCloud]
    const seeded = await seedAccount(a.cloud)
    const enrolled = await enroll(a.url, seeded.enrollmentToken)
    const agentId = enrolled.agent_id
    await a.cloud.storage.printers.insert({
      account_id: seeded.accountId,
      agent_id: agentId,
      name: 'Receipts',
      capabilities: RECEIPT_PRINTER,
      reported: true,
    })
    const session = randomUUID()
    const presence = (online: boolean) =>
      Buffer.from(JSON.stringify({ v: PROTOCOL_VERSION, online, session }))
    hub = await connectHub(mosquitto.server.url, {
      clientId: agentId,
      username: agentId,
      password: enrolled.credential,
      will: { topic: hubTopic(agentId, 'presence'), payload: presence(false), qos: 1, retain: false },
    })
    await hub.publishAsync(hubTopic(agentId, 'presence'), presence(true), { qos: 1 })
    const listed = async (node: FullCloud, what: 'agents' | 'printers') => {
      const res = await fetch(`${node.url}/api/v1/${what}`, {
        headers: { authorization: `Bearer ${seeded.token}` },
      })
      expect(res.status).toBe(200)
      return ((await res.json()) as { data: { online: boolean }[] }).data.map((item) => item.online)
    }
    for (const node of nodes) await expect.poll(() => listed(node, 'agents')).toEqual([true])

    await b.cloud.storage.agents.revoke(agentId, new Date())
    await expect.poll(() => hub!.connected, { timeout: 10_000 }).toBe(false)
    for (const node of nodes) {
      await expect.poll(() => listed(node, 'agents'), { timeout: 10_000 }).toEqual([false])
      expect(await listed(node, 'printers')).toEqual([false])
    }
    // An `online` message the hub sent before it was cut off, handled late, does not bring it back.
    await a.cloud.storage.hubPresence.markOnline(agentId, randomUUID(), new Date().toISOString())
    expect(await listed(b, 'agents')).toEqual([false])
  })
})
