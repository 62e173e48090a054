import { randomBytes } from 'node:crypto'
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { parseArgs } from 'node:util'
import { MAX_CONNECT_PACKET_BYTES } from '../broker/connection-guard.ts'
import {
  CLOUD_NODE_CONNECTIONS,
  HUB_FRONT_CONF,
  HUB_FRONT_PEM,
  type HubFrontOptions,
  hubFrontConfText,
} from '../broker/hub-front-config.ts'
import {
  CLOUD_PASSWORD_FILE,
  DYNSEC_FILE,
  dynsecState,
  findDynsecPlugin,
  MOSQUITTO_CONF,
  mosquittoConfText,
} from '../broker/mosquitto-config.ts'
import { type CloudConfig, ConfigError, loadConfig } from '../config.ts'
import { type Environment, option, UsageError } from './common.ts'

/**
 * `cloud mosquitto-config --dir DIR [--plugin PATH] [--hub-host ADDRESS] [--hub-front-dir FRONT]`: writes
 * what an external Mosquitto 2.0 needs to be the cloud's broker (MQTT_URL): DIR/mosquitto.conf listening
 * where MQTT_URL says, the dynamic-security plugin's state with the cloud's own client
 * (DIR/dynamic-security.json) and that client's password (DIR/cloud-password, for MQTT_ADMIN_PASSWORD_FILE).
 * Run again, it keeps the password and the hubs the plugin holds, and rewrites the rest. Mosquitto keeps its
 * own copy of the hubs' broker clients, which the cloud maintains (cloud/broker/dynsec.ts), so it needs no
 * database settings.
 *
 * It also writes the hubs' front (FRONT/hub-front.cfg, HAProxy; hub-front-config.ts; FRONT defaults to DIR, a
 * directory of its own lets it run as another user than Mosquitto), listening on ADDRESS (default 0.0.0.0) at
 * the port hubs are told: MQTT_PUBLIC_URL's, else MQTT_PORT; with TLS when that address is mqtts://, with
 * MQTT_TLS_CERT_FILE and MQTT_TLS_KEY_FILE joined in FRONT/hub-front.pem.
 */
export async function mosquittoConfig(args: string[], env: Environment): Promise<object> {
  const { values } = parseArgs({
    args,
    options: {
      dir: { type: 'string' },
      plugin: { type: 'string' },
      'hub-host': { type: 'string' },
      'hub-front-dir': { type: 'string' },
    },
  })
  const dir = path.resolve(option(values, 'dir'))
  const config = loadConfig(env)
  if (!config.mqttUrl)
    throw new ConfigError('MQTT_URL', 'set it to where Mosquitto is to listen (mqtt://HOST:PORT)')
  const url = new URL(config.mqttUrl)
  const tls = url.protocol === 'mqtts:'
  // What hubs are told (cloud/routes/agent-api.ts brokerUrlFor): MQTT_PUBLIC_URL, else the scheme the
  // certificate setting implies with MQTT_PORT.
  const hubUrl = config.mqttPublicUrl ? new URL(config.mqttPublicUrl) : undefined
  const hubTls = hubUrl ? hubUrl.protocol === 'mqtts:' : Boolean(config.mqttTlsCertFile)
  if ((tls || hubTls) && !(config.mqttTlsCertFile && config.mqttTlsKeyFile))
    throw new ConfigError(
      'MQTT_TLS_CERT_FILE',
      'an mqtts:// MQTT_URL or MQTT_PUBLIC_URL needs MQTT_TLS_CERT_FILE and MQTT_TLS_KEY_FILE',
    )
  // URL hosts keep IPv6 brackets; Mosquitto and HAProxy take the bare address.
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1')
  const port = Number(url.port || (tls ? 8883 : 1883))
  const hubHost = values['hub-host'] ?? '0.0.0.0'
  const hubPort = hubUrl ? Number(hubUrl.port || (hubTls ? 8883 : 1883)) : config.mqttPort
  const wildcard = (address: string) => ['0.0.0.0', '::', ''].includes(address)
  if (hubPort === port && (hubHost === host || wildcard(hubHost) || wildcard(host)))
    throw new UsageError(
      `the hubs' front and Mosquitto would both listen on port ${port}: give MQTT_URL another port (Mosquitto's, for the cloud nodes) than MQTT_PUBLIC_URL (the front's, for hubs)`,
    )
  const pluginPath = values.plugin ?? findDynsecPlugin()
  if (!pluginPath || !existsSync(pluginPath))
    throw new UsageError(
      'mosquitto_dynamic_security.so not found (Debian package mosquitto 2.0); name it with --plugin PATH',
    )
  mkdirSync(dir, { recursive: true, mode: 0o700 })
  const passwordFile = path.join(dir, CLOUD_PASSWORD_FILE)
  const password = existsSync(passwordFile)
    ? readFileSync(passwordFile, 'utf8').trim()
    : randomBytes(32).toString('base64url')
  writeFileSync(passwordFile, `${password}\n`, { mode: 0o600 })
  const dynsecFile = path.join(dir, DYNSEC_FILE)
  const existing = existsSync(dynsecFile) ? readFileSync(dynsecFile, 'utf8') : undefined
  writeFileSync(dynsecFile, dynsecState(config.mqttAdminUsername, password, existing), { mode: 0o600 })
  const configFile = path.join(dir, MOSQUITTO_CONF)
  writeFileSync(
    configFile,
    mosquittoConfText({
      host,
      port,
      dir,
      pluginPath,
      maxPacketBytes: config.mqttMaxPacketBytes,
      maxConnections: config.mqttMaxConnections + CLOUD_NODE_CONNECTIONS,
      ...(tls && {
        tls: { certFile: path.resolve(config.mqttTlsCertFile), keyFile: path.resolve(config.mqttTlsKeyFile) },
      }),
    }),
    { mode: 0o600 },
  )
  const frontDir = values['hub-front-dir'] ? path.resolve(values['hub-front-dir']) : dir
  mkdirSync(frontDir, { recursive: true, mode: 0o700 })
  const front = writeHubFront(frontDir, config, {
    listen: { host: hubHost, port: hubPort },
    broker: { host, port, tls },
    tls: hubTls,
  })
  return {
    dir,
    config_file: configFile,
    files: [configFile, dynsecFile, passwordFile, ...front.files],
    start: `mosquitto -c ${configFile}`,
    hub_front: {
      config_file: front.configFile,
      start: `haproxy -f ${front.configFile}`,
      listen: front.listen,
    },
    env: {
      MQTT_URL: config.mqttUrl,
      ...(config.mqttPublicUrl && { MQTT_PUBLIC_URL: config.mqttPublicUrl }),
      MQTT_ADMIN_USERNAME: config.mqttAdminUsername,
      MQTT_ADMIN_PASSWORD_FILE: passwordFile,
    },
  }
}

/** Writes the hubs' front (hub-front-config.ts) and, for TLS, its PEM file; the files it wrote. */
function writeHubFront(
  dir: string,
  config: CloudConfig,
  place: Pick<HubFrontOptions, 'listen' | 'broker'> & { tls: boolean },
) {
  const configFile = path.join(dir, HUB_FRONT_CONF)
  const pemFile = path.join(dir, HUB_FRONT_PEM)
  if (place.tls) {
    const pem = [config.mqttTlsCertFile, config.mqttTlsKeyFile].map((file) => readFileSync(file, 'utf8'))
    writeFileSync(pemFile, pem.map((text) => (text.endsWith('\n') ? text : `${text}\n`)).join(''), {
      mode: 0o600,
    })
  }
  writeFileSync(
    configFile,
    hubFrontConfText({
      listen: place.listen,
      broker: place.broker,
      ...(place.tls && { pemFile }),
      connectTimeoutMs: config.mqttConnectTimeoutMs,
      maxConnectBytes: MAX_CONNECT_PACKET_BYTES,
      maxPendingConnections: config.mqttMaxPendingConnections,
      maxConnections: config.mqttMaxConnections,
      keepaliveSeconds: config.hubKeepaliveSeconds,
    }),
    { mode: 0o600 },
  )
  const { host, port } = place.listen
  return {
    configFile,
    files: place.tls ? [configFile, pemFile] : [configFile],
    listen: `${host.includes(':') ? `[${host}]` : host}:${port}`,
  }
}
