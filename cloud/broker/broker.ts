import { createServer, type Server } from 'node:net'
import { Aedes } from 'aedes'
import type { Logger } from 'pino'

export interface EmbeddedBroker {
  port: number
  close(): Promise<void>
}

/**
 * The embedded MQTT broker (aedes) hubs connect to. Until hub enrollment issues credentials, it is
 * deny-by-default: every CONNECT is refused with return code 5, "not authorized" (MQTT 3.1.1 §3.2.2.3).
 * TCP_NODELAY on accepted sockets (STACK-NOTES: Nagle plus delayed ACKs costs ~88 ms per QoS 1 round trip);
 * a listen backlog of 4096 absorbs reconnect storms.
 */
export async function startBroker(options: {
  host: string
  port: number
  logger: Logger
}): Promise<EmbeddedBroker> {
  const broker = await Aedes.createBroker({
    authenticate: (client, _username, _password, done) => {
      options.logger.warn({ client_id: client.id }, 'mqtt connect refused: no hub credentials are issued yet')
      done(Object.assign(new Error('not authorized'), { returnCode: 5 as const }), false)
    },
  })
  const server: Server = createServer({ noDelay: true }, broker.handle)
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen({ host: options.host, port: options.port, backlog: 4096 }, () => {
      server.off('error', reject)
      resolve()
    })
  })
  server.on('error', (error) => options.logger.error({ err: error }, 'mqtt listener error'))
  const address = server.address()
  const port = typeof address === 'object' && address ? address.port : options.port
  return {
    port,
    close: () =>
      new Promise<void>((resolve) => {
        broker.close(() => server.close(() => resolve()))
      }),
  }
}
