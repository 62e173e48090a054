import { createServer, type Server } from 'node:net'
import { createServer as createTlsServer } from 'node:tls'
import { Aedes } from 'aedes'
import type { Logger } from 'pino'
import type { AgentIdentity } from '../storage/agents.ts'
import { createBrokerPolicy } from './broker-policy.ts'
import { type ConnectionLimits, guardConnections } from './connection-guard.ts'
import { connectExternalBroker, type ExternalBrokerOptions } from './external-broker.ts'
import { createEmbeddedHubBus, type HubBus } from './hub-bus.ts'

export interface BrokerOptions {
  host: string
  port: number
  logger: Logger
  findAgentByCredential(credentialHash: Buffer): AgentIdentity | undefined
  /** PEM certificate and key: MQTT over TLS on the same port instead of plain TCP. */
  tls?: { cert: Buffer; key: Buffer }
  /** What a client may make the broker hold (connection-guard.ts), and how long it has to send CONNECT. */
  limits: ConnectionLimits & { connectTimeoutMs: number }
  /**
   * MQTT_URL: use that external Mosquitto (external-broker.ts) instead of listening; the options above that
   * concern the listener are then unused.
   */
  external?: Omit<ExternalBrokerOptions, 'logger'>
}

export interface EmbeddedBroker {
  port: number
  bus: HubBus
  /** Closes the hub's MQTT session, if it has one here (its credential was revoked). Whether it had one. */
  disconnect(agentId: string): boolean
  /** Whether the listener accepts connections and the broker is open (readiness probe). */
  ready(): boolean
  /**
   * External broker only: gives the hub its broker client when the cloud sees its credential (enrollment,
   * connection lookup). The embedded broker checks credentials against the database itself.
   */
  provisionHub?(agentId: string, credential: string): Promise<void>
  /** Embedded broker only: the MQTT clients connected to it now. */
  clients?(): number
  /** Whether sessions live in this process (embedded), so that none survives its restart. */
  embedded: boolean
  /**
   * External broker only: stops taking hub messages, so that the broker gives them to the other nodes, once
   * those already on their way here have arrived (a node that stops). The embedded broker is the hubs' only
   * broker: closing it is leaving.
   */
  leave?(): Promise<void>
  close(): Promise<void>
}

/**
 * The embedded MQTT broker (aedes) hubs connect to, with the policy of broker-policy.ts. TCP_NODELAY on
 * accepted sockets (STACK-NOTES: Nagle plus delayed ACKs costs ~88 ms per QoS 1 round trip); a listen
 * backlog of 4096 absorbs reconnect storms; a socket error never takes the broker down; connection-guard.ts
 * bounds packet sizes and connections not yet authenticated.
 */
export async function startBroker(options: BrokerOptions): Promise<EmbeddedBroker> {
  const { logger } = options
  if (options.external) {
    const external = await connectExternalBroker({ ...options.external, logger })
    return {
      port: Number(
        new URL(options.external.url).port || (options.external.url.startsWith('mqtts:') ? 8883 : 1883),
      ),
      bus: external.bus,
      // Revoked hubs are cut off by deleting their broker client (external-broker.ts watches for them).
      disconnect: () => false,
      ready: external.ready,
      provisionHub: external.provisionHub,
      embedded: false,
      leave: external.leave,
      close: external.close,
    }
  }
  const broker = await Aedes.createBroker({
    ...createBrokerPolicy(options),
    connectTimeout: options.limits.connectTimeoutMs,
  })
  broker.on('clientError', (client, error) =>
    logger.debug({ client_id: client.id, err: error }, 'mqtt client error'),
  )
  broker.on('connectionError', (_client, error) => logger.debug({ err: error }, 'mqtt connection error'))
  const handle = guardConnections(broker, options.limits, logger)
  const server: Server = options.tls
    ? createTlsServer(
        { ...options.tls, noDelay: true, handshakeTimeout: options.limits.connectTimeoutMs } as never,
        handle,
      )
    : createServer({ noDelay: true }, handle)
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen({ host: options.host, port: options.port, backlog: 4096 }, () => {
      server.off('error', reject)
      resolve()
    })
  })
  server.on('error', (error) => logger.error({ err: error }, 'mqtt listener error'))
  const address = server.address()
  const port = typeof address === 'object' && address ? address.port : options.port
  return {
    port,
    bus: createEmbeddedHubBus(broker, logger),
    disconnect(agentId) {
      // aedes keeps its connected clients by client id, which the policy makes the agent id; not in its types.
      const client = (broker as unknown as { clients: Record<string, { close(): void }> }).clients[agentId]
      client?.close()
      return client !== undefined
    },
    ready: () => server.listening && !broker.closed,
    clients: () => broker.connectedClients,
    embedded: true,
    // Stop accepting first, so that a hub reconnecting at once cannot slip in after its clients are closed;
    // the listener's callback comes once every connection has ended.
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve())
        broker.close()
      }),
  }
}
