import { randomUUID } from 'node:crypto'
import { readFileSync } from 'node:fs'
import type { Socket } from 'node:net'
import { hostname } from 'node:os'
import mqtt, { type MqttClient } from 'mqtt'
import type { Logger } from 'pino'
import { decodeHubMessage } from '../../protocol/hub-message-decoder.ts'
import {
  HUB_TOPICS,
  type HubTopic,
  hubTopic,
  parseHubTopic,
  TOPIC_PREFIX,
} from '../../protocol/hub-messages.ts'
import { type CloudConfig, ConfigError } from '../config.ts'
import { CONTROL_RESPONSE_TOPIC, DynsecControl } from './dynsec.ts'
import type { HubBus } from './hub-bus.ts'
import { SHARE_GROUP } from './mosquitto-config.ts'

/**
 * The cloud on an external Mosquitto 2.0 (MQTT_URL; docs/several-nodes.md). One MQTT 5 connection per
 * node, with the cloud's own credential, carries:
 * - the HubBus: the hubs' topics through the shared subscription `$share/print-hub-cloud/hubs/+/<topic>`, so
 *   that every hub message goes to exactly one node (MQTT 5 §4.8.2); QoS 1 both ways. The node's session
 *   lives exactly as long as its connection (clean start, session expiry 0: MQTT 5 §3.1.2.4, §3.1.2.11.2), so
 *   a node that stops or dies leaves the group at once and the broker gives its turn of the hubs' messages to
 *   the nodes that remain (docs/architecture.md, "Nodes come and go");
 * - the dynamic-security plugin's control topic (dynsec.ts): hubs are given their broker client when the cloud
 *   sees their plaintext credential (enrollment, the connection lookup) and lose it when revoked.
 * Reconnects with exponential backoff and jitter; `ready()` says whether it is connected and subscribed.
 */
export interface ExternalBrokerOptions {
  url: string
  username: string
  password: string
  /** Unique among the nodes that run at once; nothing is kept under it once the node has gone. */
  clientId: string
  logger: Logger
  /** Hubs revoked at or after an ISO time (storage.agents.revokedSince). */
  revokedSince(since: string): Promise<{ agent_id: string; revoked_at: string }[]>
  /** How often to look for revoked hubs (the CLI that revokes one has only the database). */
  revocationCheckMs: number
  /**
   * A revoked hub's broker client is gone (deleted here or by another node): its presence ends here, since
   * Mosquitto publishes no last will for a client the plugin kicks. Called again for a hub after a failure.
   */
  hubRevoked?(agentId: string): Promise<void>
  /**
   * Subscribed again after a reconnect (not after the first connection): what hubs published while this node
   * was away may have reached no one (cloud/presence/announce-after-reconnect.ts).
   */
  resubscribed?(subscribedAt: Date): void
}

export interface ExternalBroker {
  bus: HubBus
  /** Gives the hub its broker client, unless it has one; throws when the broker cannot be told. */
  provisionHub(agentId: string, credential: string): Promise<void>
  /** Whether connected and subscribed (readiness probe). */
  ready(): boolean
  /**
   * Stops taking hub messages (a node that stops, e.g. on SIGTERM): leaves the shared subscriptions, so that
   * the broker gives the hubs' messages to the other nodes, and resolves once the messages already on their
   * way here have arrived and been handed to their handlers. Publishing still works until `close`.
   */
  leave(): Promise<void>
  close(): Promise<void>
}

const RECONNECT_MIN_MS = 500
/**
 * A node is one of a few clients of its broker, not one of a fleet: it tries again at least every 2 s. What
 * hubs publish after a broker restart and before any node has subscribed again reaches no one (their
 * presence above all: cloud/presence/announce-after-reconnect.ts), and a 30 s ceiling measured nodes coming
 * back up to 8.7 s after the broker.
 */
const RECONNECT_MAX_MS = 2_000
const LOOK_BACK_MS = 60_000
/**
 * The broker closes a node's connection (and so ends its session and its place in the group) after one and a
 * half keep-alives without a packet (MQTT 5 §3.1.2.10): a node whose host vanished without closing its socket
 * stops taking hub messages within 15 s. A node's ping costs nothing next to its traffic.
 */
const NODE_KEEPALIVE_SECONDS = 10
/** How long `leave` waits for the messages already sent to it: until none came for QUIET_MS, at most LEAVE_MS. */
const QUIET_MS = 250
const LEAVE_MS = 3_000

/**
 * The default MQTT_CLIENT_ID: the host and the API port, which tell an operator where a node runs, and a
 * random part, so that every process has an id of its own: two nodes with one id would take the connection
 * from each other (MQTT 5 §3.1.4-3), and a node's session ends with it, so no id needs to be used again.
 */
export const defaultClientId = (port: number) =>
  `cloud-${hostname()
    .replace(/[^A-Za-z0-9._-]/g, '-')
    .slice(0, 40)}-${port}-${randomUUID().slice(0, 8)}`

/** How soon a revoked hub loses its broker client (the CLI that revokes it has only the database). */
const REVOCATION_CHECK_MS = 1000

/**
 * The external broker's settings when MQTT_URL is set (for startBroker's `external`); nothing otherwise.
 * The password is read from MQTT_ADMIN_PASSWORD_FILE and never logged.
 */
export function externalBrokerSettings(
  config: CloudConfig,
  revocations: Pick<ExternalBrokerOptions, 'revokedSince' | 'hubRevoked' | 'resubscribed'>,
): { external?: Omit<ExternalBrokerOptions, 'logger'> } {
  if (!config.mqttUrl) return {}
  if (!config.mqttAdminPasswordFile)
    throw new ConfigError(
      'MQTT_ADMIN_PASSWORD_FILE',
      'MQTT_URL needs the cloud’s broker password: the cloud-password file `cloud mosquitto-config` wrote',
    )
  const password = readFileSync(config.mqttAdminPasswordFile, 'utf8').trim()
  if (!password) throw new ConfigError('MQTT_ADMIN_PASSWORD_FILE', `${config.mqttAdminPasswordFile} is empty`)
  return {
    external: {
      url: config.mqttUrl,
      username: config.mqttAdminUsername,
      password,
      clientId: config.mqttClientId || defaultClientId(config.port),
      ...revocations,
      revocationCheckMs: REVOCATION_CHECK_MS,
    },
  }
}

type Handler = (agentId: string, payload: unknown) => void | Promise<void>

export async function connectExternalBroker(options: ExternalBrokerOptions): Promise<ExternalBroker> {
  const { logger } = options
  const handlers = new Map<HubTopic, Handler>()
  let subscribed = false
  let failures = 0
  let lastError: string | undefined
  let closing = false
  const client: MqttClient = mqtt.connect(options.url, {
    protocolVersion: 5,
    clientId: options.clientId,
    username: options.username,
    password: options.password,
    // A session that ends with the connection: messages queued for a node that is away would wait for a node
    // that may never come back (Mosquitto keeps giving an absent member of the group its turn, and never moves
    // a message to another member: eclipse/mosquitto#2662). What a node took and did not record is asked
    // again from the database's side (silent-jobs.ts, the hubs' confirmed presence).
    clean: true,
    properties: { sessionExpiryInterval: 0 },
    keepalive: NODE_KEEPALIVE_SECONDS,
    connectTimeout: 10_000,
    reconnectPeriod: RECONNECT_MIN_MS,
    // subscribeAll subscribes again on every connect.
    resubscribe: false,
  })
  const dynsec = new DynsecControl(client)
  let announceSubscribed = () => {}
  const firstSubscribed = new Promise<void>((resolve) => {
    announceSubscribed = resolve
  })

  const sharedFilter = (topic: HubTopic) => `$share/${SHARE_GROUP}/${TOPIC_PREFIX}/+/${topic}`
  /** Set by `leave`: the node takes no more hub messages, even after a reconnect. */
  let leaving = false
  let lastMessageAt = 0
  const subscribeAll = async () => {
    const filters = [CONTROL_RESPONSE_TOPIC, ...(leaving ? [] : [...handlers.keys()].map(sharedFilter))]
    const granted = await client.subscribeAsync(filters, { qos: 1 })
    const refused = granted.filter((grant) => grant.qos > 2)
    if (refused.length > 0)
      throw new Error(`the broker refused ${refused.map((grant) => grant.topic).join(', ')}`)
  }

  /** Whether this is a reconnect: what hubs published meanwhile may have reached no one (`resubscribed`). */
  let connectedBefore = false

  client.on('connect', () => {
    failures = 0
    lastError = undefined
    client.options.reconnectPeriod = RECONNECT_MIN_MS
    ;(client.stream as Socket).setNoDelay?.(true)
    subscribeAll().then(
      () => {
        subscribed = true
        announceSubscribed()
        logger.info({ mqtt_url: options.url, client_id: options.clientId }, 'connected to the MQTT broker')
        if (connectedBefore) options.resubscribed?.(new Date())
        connectedBefore = true
      },
      (error: unknown) => logger.error({ err: error }, 'subscribing on the MQTT broker failed'),
    )
  })
  client.on('close', () => {
    subscribed = false
    if (closing) return
    failures++
    client.options.reconnectPeriod = nodeReconnectDelayMs(failures)
  })
  client.on('error', (error) => {
    const reason = (error as NodeJS.ErrnoException).code ?? error.message
    if (reason === lastError) return
    lastError = reason
    logger.warn({ mqtt_url: options.url, reason }, 'cannot reach the MQTT broker; trying again')
  })
  client.on('message', (topic, payload) => {
    if (topic === CONTROL_RESPONSE_TOPIC) return dynsec.onResponse(payload)
    lastMessageAt = Date.now()
    const target = parseHubTopic(topic)
    const handler = target && handlers.get(target.topic)
    if (!target || !handler) return
    const decoded = decodeHubMessage(target.topic, payload)
    if (!decoded.ok) {
      logger.warn(
        { agent_id: target.agentId, topic: target.topic, reason: decoded.reason },
        'hub message dropped',
      )
      return
    }
    Promise.resolve()
      .then(() => handler(target.agentId, decoded.value))
      .catch((error: unknown) => {
        logger.error(
          { err: error, agent_id: target.agentId, topic: target.topic },
          'hub message handler failed',
        )
      })
  })

  // Revocation: `cloud hub revoke` writes only the database; every node deletes the hub's broker client,
  // which closes its connection. On start, every hub ever revoked (a revocation while no node ran).
  const removed = new Map<string, number>()
  let checking = false
  const checkRevoked = async (since: string) => {
    if (checking || !client.connected) return
    checking = true
    try {
      const now = Date.now()
      for (const [id, at] of removed) if (now - at > 2 * LOOK_BACK_MS) removed.delete(id)
      const hubs = (await options.revokedSince(since)).filter((hub) => !removed.has(hub.agent_id))
      if (hubs.length === 0) return
      const gone = new Set(await dynsec.removeHubs(hubs.map((hub) => hub.agent_id)))
      for (const hub of hubs) {
        await options.hubRevoked?.(hub.agent_id)
        removed.set(hub.agent_id, now)
        if (gone.has(hub.agent_id))
          logger.warn(
            { agent_id: hub.agent_id, revoked_at: hub.revoked_at },
            'hub revoked: broker client deleted and mqtt session closed',
          )
      }
    } catch (error) {
      logger.error({ err: error }, 'checking for revoked hubs failed; the next check tries again')
    } finally {
      checking = false
    }
  }
  let sweptAll = false
  const timer = setInterval(() => {
    const since = sweptAll ? new Date(Date.now() - LOOK_BACK_MS).toISOString() : new Date(0).toISOString()
    void checkRevoked(since).then(() => {
      if (client.connected) sweptAll = true
    })
  }, options.revocationCheckMs)
  timer.unref()

  const bus: HubBus = {
    async publish(agentId, topic, payload) {
      // Failing fast while away from the broker: the database keeps the job, offered again on reconnect.
      if (!client.connected) throw new Error('not connected to the MQTT broker')
      await client.publishAsync(hubTopic(agentId, topic), JSON.stringify(payload), { qos: 1 })
    },
    async subscribe(topic, handler) {
      if (HUB_TOPICS[topic].from !== 'hub') throw new Error(`${topic} is not a hub topic`)
      handlers.set(topic, handler as Handler)
      if (client.connected && !leaving) await client.subscribeAsync(sharedFilter(topic), { qos: 1 })
    },
  }

  try {
    await firstConnection(client, options.url, firstSubscribed)
  } catch (error) {
    clearInterval(timer)
    closing = true
    client.end(true)
    throw error
  }
  return {
    bus,
    async provisionHub(agentId, credential) {
      const outcome = await dynsec.provisionHub(agentId, credential)
      if (outcome === 'created') logger.info({ agent_id: agentId }, 'hub given its broker client')
    },
    ready: () => client.connected && subscribed && !leaving,
    async leave() {
      if (leaving) return
      leaving = true
      if (!client.connected || handlers.size === 0) return
      try {
        // After the UNSUBACK the broker routes nothing more here (MQTT 5 §3.10.4); what it had already sent or
        // queued for this session still comes, in order, and is handed to its handler as it arrives.
        await client.unsubscribeAsync([...handlers.keys()].map(sharedFilter))
        const until = Date.now() + LEAVE_MS
        lastMessageAt = Math.max(lastMessageAt, Date.now())
        while (Date.now() - lastMessageAt < QUIET_MS && Date.now() < until)
          await new Promise((resolve) => setTimeout(resolve, QUIET_MS / 5))
        logger.info({ client_id: options.clientId }, 'left the hubs’ shared subscriptions')
      } catch (error) {
        // Closing ends the session all the same; what it held is asked again (docs/architecture.md).
        logger.warn({ err: error }, 'leaving the hubs’ shared subscriptions failed')
      }
    },
    async close() {
      closing = true
      clearInterval(timer)
      await client.endAsync()
    },
  }
}

const FIRST_CONNECTION_MS = 15_000

/** The first connection, so that a wrong MQTT_URL or credential stops the start with one line. */
function firstConnection(client: MqttClient, url: string, subscribed: Promise<void>): Promise<void> {
  return new Promise((resolve, reject) => {
    const done = (error?: Error) => {
      clearTimeout(timer)
      client.off('error', onError)
      if (error) reject(error)
      else resolve()
    }
    const onError = (error: Error & { code?: unknown }) => {
      // CONNACK refusals (MQTT 5 §3.2.2.2): 0x86 bad user name or password, 0x87 not authorized.
      if (error.code === 134 || error.code === 135)
        done(
          new Error(
            `MQTT_URL: ${url} refused the cloud's credential (MQTT_ADMIN_USERNAME, MQTT_ADMIN_PASSWORD_FILE)`,
          ),
        )
    }
    const timer = setTimeout(
      () =>
        done(new Error(`MQTT_URL: no MQTT broker answered at ${url} within ${FIRST_CONNECTION_MS / 1000} s`)),
      FIRST_CONNECTION_MS,
    )
    void subscribed.then(() => done())
    client.on('error', onError)
  })
}

/** The wait before a node's next connection attempt after `failures` in a row: doubling, with jitter. */
export function nodeReconnectDelayMs(failures: number, random = Math.random): number {
  const ceiling = Math.min(RECONNECT_MAX_MS, RECONNECT_MIN_MS * 2 ** Math.min(failures, 16))
  return Math.round(ceiling / 2 + (random() * ceiling) / 2)
}
