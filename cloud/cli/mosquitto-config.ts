import { randomBytes } from 'node:crypto'
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { parseArgs } from 'node:util'
import {
  CLOUD_PASSWORD_FILE,
  DYNSEC_FILE,
  dynsecState,
  findDynsecPlugin,
  MOSQUITTO_CONF,
  mosquittoConfText,
} from '../broker/mosquitto-config.ts'
import { ConfigError, loadConfig } from '../config.ts'
import { option, UsageError } from './common.ts'

/**
 * `cloud mosquitto-config --dir DIR [--plugin PATH]`: writes what an external Mosquitto 2.0 needs to be the
 * cloud's broker (MQTT_URL): DIR/mosquitto.conf listening where MQTT_URL says, the dynamic-security plugin's
 * state with the cloud's own client (DIR/dynamic-security.json) and that client's password
 * (DIR/cloud-password, for MQTT_ADMIN_PASSWORD_FILE). Run again, it keeps the password and the hubs the
 * plugin holds, and rewrites the rest. Mosquitto keeps its own copy of the hubs' broker clients, which the
 * cloud maintains (cloud/broker/dynsec.ts), so it needs no database settings.
 */
export async function mosquittoConfig(args: string[]): Promise<object> {
  const { values } = parseArgs({ args, options: { dir: { type: 'string' }, plugin: { type: 'string' } } })
  const dir = path.resolve(option(values, 'dir'))
  const config = loadConfig()
  if (!config.mqttUrl)
    throw new ConfigError('MQTT_URL', 'set it to where Mosquitto is to listen (mqtt://HOST:PORT)')
  const url = new URL(config.mqttUrl)
  const tls = url.protocol === 'mqtts:'
  if (tls && !(config.mqttTlsCertFile && config.mqttTlsKeyFile))
    throw new ConfigError(
      'MQTT_TLS_CERT_FILE',
      'an mqtts:// MQTT_URL needs MQTT_TLS_CERT_FILE and MQTT_TLS_KEY_FILE',
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
      // URL hosts keep IPv6 brackets; Mosquitto takes the bare address.
      host: url.hostname.replace(/^\[(.*)\]$/, '$1'),
      port: Number(url.port || (tls ? 8883 : 1883)),
      dir,
      pluginPath,
      maxPacketBytes: config.mqttMaxPacketBytes,
      ...(tls && {
        tls: { certFile: path.resolve(config.mqttTlsCertFile), keyFile: path.resolve(config.mqttTlsKeyFile) },
      }),
    }),
    { mode: 0o600 },
  )
  return {
    dir,
    config_file: configFile,
    files: [configFile, dynsecFile, passwordFile],
    start: `mosquitto -c ${configFile}`,
    env: {
      MQTT_URL: config.mqttUrl,
      MQTT_ADMIN_USERNAME: config.mqttAdminUsername,
      MQTT_ADMIN_PASSWORD_FILE: passwordFile,
    },
  }
}
