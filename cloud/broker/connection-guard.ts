import type { Socket } from 'node:net'
import type { Aedes } from 'aedes'
import type { Logger } from 'pino'
import { PacketSizeMeter } from './packet-size-meter.ts'

/**
 * The largest packet a connection may send before it is authenticated. The first packet must be a CONNECT
 * [MQTT-3.1.0-1]; a hub's, with its agent id, credential and presence will, is under 1 KiB.
 */
export const MAX_CONNECT_PACKET_BYTES = 4096

export interface ConnectionLimits {
  /** The largest packet an authenticated hub may send (MQTT_MAX_PACKET_BYTES). */
  maxPacketBytes: number
  /** Connections accepted but not yet authenticated (MQTT_MAX_PENDING_CONNECTIONS); more are closed at once. */
  maxPendingConnections: number
}

/**
 * Wraps aedes's connection handler so that no client can make the broker hold more than the limits allow:
 * beyond `maxPendingConnections` unauthenticated connections a new socket is closed at once, and a socket
 * whose next packet announces more than its limit (MAX_CONNECT_PACKET_BYTES until aedes has authenticated
 * it, `maxPacketBytes` after) is closed before its body arrives. aedes's own connect timeout closes the
 * ones that never authenticate.
 */
export function guardConnections(
  broker: Aedes,
  limits: ConnectionLimits,
  logger: Logger,
): (socket: Socket) => void {
  const onAuthenticated = new WeakMap<object, (agentId: string) => void>()
  broker.on('clientReady', (client) => onAuthenticated.get(client.conn)?.(client.id))
  let pending = 0
  let refused = 0

  const release = () => {
    pending -= 1
    if (refused > 0 && pending < limits.maxPendingConnections) {
      logger.info({ refused }, 'mqtt accepting new connections again')
      refused = 0
    }
  }

  return (socket) => {
    if (pending >= limits.maxPendingConnections) {
      if (refused === 0) {
        logger.warn(
          { max_pending_connections: limits.maxPendingConnections },
          'mqtt connections refused: too many not authenticated yet',
        )
      }
      refused += 1
      socket.on('error', () => {})
      socket.destroy()
      return
    }
    pending += 1
    let authenticated = false
    let agentId: string | undefined
    const settle = () => {
      if (onAuthenticated.delete(socket)) release()
    }
    onAuthenticated.set(socket, (id) => {
      authenticated = true
      agentId = id
      settle()
    })
    socket.once('close', settle)
    const client = broker.handle(socket)

    const meter = new PacketSizeMeter(() =>
      authenticated ? limits.maxPacketBytes : MAX_CONNECT_PACKET_BYTES,
    )
    // aedes reads the socket with read() on 'readable'; each read() that returns a chunk also emits 'data'
    // with it (Node.js stream docs, readable.read()), so this sees every chunk before aedes parses it.
    // Added after aedes's 'readable' listener, it leaves the socket in paused mode. Closing the aedes client
    // here detaches its parser, so no packet of the chunk being read is handled.
    socket.on('data', (chunk: Buffer) => {
      if (client.closed) return
      const oversize = meter.measure(chunk)
      if (!oversize) return
      logger.warn(
        {
          remote_address: socket.remoteAddress,
          agent_id: agentId,
          ...oversize,
          limit: authenticated ? limits.maxPacketBytes : MAX_CONNECT_PACKET_BYTES,
        },
        'mqtt connection dropped: packet too large',
      )
      client.close()
      socket.destroy()
    })
  }
}
