import { randomBytes } from 'node:crypto'
import {
  DYNSEC_FILE,
  dynsecState,
  findDynsecPlugin,
  mosquittoConfText,
} from '../../../cloud/broker/mosquitto-config.ts'
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
