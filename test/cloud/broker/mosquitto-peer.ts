import { randomBytes } from 'node:crypto'
import { readFileSync } from 'node:fs'
import {
  DYNSEC_FILE,
  dynsecState,
  findDynsecPlugin,
  mosquittoConfText,
} from '../../../cloud/broker/mosquitto-config.ts'
import { cloudCommand } from '../../helpers/cli.ts'
import { type MosquittoServer, startMosquitto } from '../../helpers/mosquitto-server.ts'

/** A real Mosquitto configured exactly as `cloud mosquitto-config` configures it, with the cloud's credential. */
export interface CloudMosquitto {
  server: MosquittoServer
  adminUsername: string
  adminPassword: string
}

export async function startCloudMosquitto(): Promise<CloudMosquitto> {
  const pluginPath = findDynsecPlugin()
  if (!pluginPath) throw new Error('mosquitto_dynamic_security.so is not installed')
  const adminUsername = 'print-hub-cloud'
  const adminPassword = randomBytes(24).toString('base64url')
  const server = await startMosquitto({
    config: ({ port, dir }) =>
      mosquittoConfText({ host: '127.0.0.1', port, dir, pluginPath, maxPacketBytes: 16 * 1024 * 1024 }),
    files: { [DYNSEC_FILE]: dynsecState(adminUsername, adminPassword) },
  })
  return { server, adminUsername, adminPassword }
}

/**
 * A real Mosquitto started as an operator starts it: `cloud mosquitto-config --dir DIR` (MQTT_URL on a free
 * loopback port; the CLI's command, run in this process), then `mosquitto -c DIR/mosquitto.conf`. The cloud's password is in `DIR/cloud-password`.
 */
export function startConfiguredMosquitto(dataDir: string): Promise<MosquittoServer> {
  return startMosquitto({
    config: async ({ port, dir }) => {
      const written = await cloudCommand<{ config_file: string }>(['mosquitto-config', '--dir', dir], {
        MQTT_URL: `mqtt://127.0.0.1:${port}`,
        DATA_DIR: dataDir,
      })
      return readFileSync(written.config_file, 'utf8')
    },
  })
}
