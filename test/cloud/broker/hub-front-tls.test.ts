import { once } from 'node:events'
import { readFileSync, statSync, writeFileSync } from 'node:fs'
import { connect } from 'node:net'
import path from 'node:path'
import mqtt from 'mqtt'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { cloudCommand } from '../../helpers/cli.ts'
import { freePort } from '../../helpers/free-port.ts'
import { type HaproxyServer, startHaproxy } from '../../helpers/haproxy-server.ts'
import { type MosquittoServer, startMosquitto } from '../../helpers/mosquitto-server.ts'
import { tempDir } from '../../helpers/temp-dir.ts'
import { makeCertificate } from '../fetch/tls-fixture.ts'

/**
 * Hubs on MQTT over TLS with an external Mosquitto: an mqtts:// MQTT_PUBLIC_URL makes `cloud mosquitto-config`
 * end TLS at the hubs' front with MQTT_TLS_CERT_FILE and MQTT_TLS_KEY_FILE; Mosquitto listens in plain TCP for
 * the front and the cloud nodes (MQTT_URL). The connect timeout covers the TLS handshake, as on the embedded
 * broker.
 */
describe('the hubs’ front with TLS', () => {
  const scratch = tempDir('hub-front-tls-')
  const certificate = makeCertificate('localhost', ['localhost'])
  let mosquitto: MosquittoServer
  let front: HaproxyServer
  let written: { files: string[]; hub_front: { config_file: string; listen: string } }
  let frontPort: number

  beforeAll(async () => {
    const certFile = path.join(scratch.path, 'cert.pem')
    const keyFile = path.join(scratch.path, 'key.pem')
    writeFileSync(certFile, certificate.cert)
    writeFileSync(keyFile, certificate.key, { mode: 0o600 })
    frontPort = await freePort()
    mosquitto = await startMosquitto({
      config: async ({ port, dir }) => {
        written = await cloudCommand(['mosquitto-config', '--dir', dir, '--hub-host', '127.0.0.1'], {
          MQTT_URL: `mqtt://127.0.0.1:${port}`,
          MQTT_PUBLIC_URL: `mqtts://localhost:${frontPort}`,
          MQTT_TLS_CERT_FILE: certFile,
          MQTT_TLS_KEY_FILE: keyFile,
          MQTT_CONNECT_TIMEOUT_MS: '1000',
          // HAProxy needs two descriptors per connection; more than this machine's 20,000 would stop it.
          MQTT_MAX_CONNECTIONS: '50',
          DATA_DIR: scratch.path,
        })
        return readFileSync(path.join(dir, 'mosquitto.conf'), 'utf8')
      },
    })
    front = await startHaproxy({ configFile: written.hub_front.config_file, port: frontPort })
  })
  afterAll(async () => {
    await front?.stop()
    await mosquitto?.stop()
    scratch.remove()
  })

  it('writes certificate and key for the front in one file only its owner reads', () => {
    const pem = written.files.find((file) => file.endsWith('hub-front.pem')) as string
    expect(readFileSync(pem, 'utf8')).toBe(`${certificate.cert}${certificate.key}`)
    expect(statSync(pem).mode & 0o777).toBe(0o600)
    expect(written.hub_front.listen).toBe(`127.0.0.1:${frontPort}`)
    expect(readFileSync(path.join(mosquitto.dir, 'mosquitto.conf'), 'utf8')).not.toMatch(/certfile/)
  })

  it('lets a client log in over TLS and refuses plain MQTT on the TLS port', async () => {
    const login = {
      clientId: 'tls-probe',
      username: 'print-hub-cloud',
      password: readFileSync(path.join(mosquitto.dir, 'cloud-password'), 'utf8').trim(),
      reconnectPeriod: 0,
    }
    const client = await mqtt.connectAsync(`mqtts://localhost:${frontPort}`, {
      ...login,
      ca: certificate.cert,
    })
    expect(client.connected).toBe(true)
    await client.endAsync()
    const plain = mqtt.connect(`mqtt://127.0.0.1:${frontPort}`, login)
    plain.on('error', () => {})
    const outcome = await new Promise((resolve) => {
      plain.once('connect', () => resolve('connected'))
      plain.once('close', () => resolve('closed'))
    })
    plain.end(true)
    expect(outcome).toBe('closed')
  })

  it('closes a connection that never starts the TLS handshake once the connect timeout has passed', async () => {
    const socket = connect({ host: '127.0.0.1', port: frontPort })
    socket.on('error', () => {})
    let closed = false
    socket.once('close', () => {
      closed = true
    })
    await once(socket, 'connect')
    await expect.poll(() => closed, { timeout: 5_000 }).toBe(true)
  })
})
