import { writeFileSync } from 'node:fs'
import path from 'node:path'
import mqtt from 'mqtt'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { freePort } from '../helpers/free-port.ts'
import { tempDir } from '../helpers/temp-dir.ts'
import { makeCertificate } from './fetch/tls-fixture.ts'
import { enroll, seedAccount, startFullCloud } from './hub-link.ts'

describe('MQTT over TLS', () => {
  const certDir = tempDir('mqtt-tls-')
  const certificate = makeCertificate('localhost', ['localhost'])
  let full: Awaited<ReturnType<typeof startFullCloud>>
  let hub: { agent_id: string; credential: string }

  beforeAll(async () => {
    writeFileSync(path.join(certDir.path, 'cert.pem'), certificate.cert)
    writeFileSync(path.join(certDir.path, 'key.pem'), certificate.key)
    const port = await freePort()
    full = await startFullCloud({
      PORT: String(port),
      PUBLIC_URL: `http://localhost:${port}`,
      MQTT_TLS_CERT_FILE: path.join(certDir.path, 'cert.pem'),
      MQTT_TLS_KEY_FILE: path.join(certDir.path, 'key.pem'),
    })
    hub = await enroll(full.url, (await seedAccount(full.cloud)).enrollmentToken)
  })
  afterAll(async () => {
    await full.close()
    certDir.remove()
  })

  it('tells hubs an mqtts:// address and takes their TLS connections with the configured certificate', async () => {
    expect(full.mqttUrl).toMatch(/^mqtts:\/\/localhost:\d+$/)
    const client = await mqtt.connectAsync(full.mqttUrl, {
      clientId: hub.agent_id,
      username: hub.agent_id,
      password: hub.credential,
      ca: certificate.cert,
      reconnectPeriod: 0,
    })
    expect(client.connected).toBe(true)
    await client.endAsync()
  })

  it('refuses a plain TCP MQTT connection on the TLS port', async () => {
    const plain = full.mqttUrl.replace('mqtts://', 'mqtt://')
    const client = mqtt.connect(plain, {
      clientId: hub.agent_id,
      username: hub.agent_id,
      password: hub.credential,
      reconnectPeriod: 0,
      connectTimeout: 2000,
    })
    const outcome = await new Promise<string>((resolve) => {
      client.once('connect', () => resolve('connected'))
      client.once('close', () => resolve('closed'))
    })
    client.end(true)
    expect(outcome).toBe('closed')
  })
})
