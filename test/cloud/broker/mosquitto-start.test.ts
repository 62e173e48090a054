import { writeFileSync } from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { tempDir } from '../../helpers/temp-dir.ts'
import { startFullCloud } from '../hub-link.ts'
import { type CloudMosquitto, startCloudMosquitto } from './mosquitto-peer.ts'

/**
 * With MQTT_URL the cloud does not listen for MQTT, so MQTT_PORT is not its to check: a node on the host that
 * runs Mosquitto starts even when MQTT_PORT (1883 by default) is Mosquitto's own port.
 */
describe('a cloud node on the host of its Mosquitto', () => {
  const scratch = tempDir('mosquitto-start-')
  let mosquitto: CloudMosquitto
  let passwordFile: string

  beforeAll(async () => {
    mosquitto = await startCloudMosquitto()
    passwordFile = path.join(scratch.path, 'cloud-password')
    writeFileSync(passwordFile, mosquitto.adminPassword, { mode: 0o600 })
  }, 30_000)

  afterAll(async () => {
    await mosquitto?.server.stop()
    scratch.remove()
  })

  it('starts although MQTT_PORT is the port Mosquitto listens on, and is ready', async () => {
    const full = await startFullCloud({
      MQTT_URL: mosquitto.server.url,
      MQTT_ADMIN_PASSWORD_FILE: passwordFile,
      MQTT_CLIENT_ID: 'cloud-same-host',
      MQTT_PORT: String(mosquitto.server.port),
    })
    try {
      const res = await fetch(`${full.url}/readyz`)
      expect({ status: res.status, body: await res.json() }).toEqual({ status: 200, body: { status: 'ok' } })
    } finally {
      await full.close()
    }
  })
})
