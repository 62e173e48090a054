import { createServer } from 'node:net'
import type { CloudConfig } from './config.ts'

/** A port the cloud is configured to listen on cannot be had; the message names the setting to change. */
export class PortUnavailableError extends Error {
  constructor(
    readonly setting: 'PORT' | 'MQTT_PORT',
    host: string,
    port: number,
    code: string,
  ) {
    const address = `${host.includes(':') ? `[${host}]` : host}:${port}`
    super(
      code === 'EADDRINUSE'
        ? `${setting}: ${address} is already in use (${code}); stop the program that uses it or set ${setting} to a free port`
        : `${setting}: cannot listen on ${address} (${code}); check HOST, or set ${setting} to another port`,
    )
    this.name = 'PortUnavailableError'
  }
}

/** Listens on the port and closes it again; rejects with PortUnavailableError when it cannot be had. */
function probe(setting: 'PORT' | 'MQTT_PORT', host: string, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', (error: NodeJS.ErrnoException) =>
      reject(new PortUnavailableError(setting, host, port, error.code ?? 'error')),
    )
    server.listen({ host, port, exclusive: true }, () => server.close(() => resolve()))
  })
}

/**
 * Checks that PORT and MQTT_PORT can be listened on, before start-up touches any state: a second cloud on a
 * busy port stops here. Port 0 (any free port) is always available.
 */
export async function refuseBusyPorts(
  config: Pick<CloudConfig, 'host' | 'port' | 'mqttPort'>,
): Promise<void> {
  if (config.port !== 0) await probe('PORT', config.host, config.port)
  if (config.mqttPort !== 0) await probe('MQTT_PORT', config.host, config.mqttPort)
}
