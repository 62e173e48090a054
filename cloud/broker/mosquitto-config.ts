import { pbkdf2Sync, randomBytes } from 'node:crypto'
import { existsSync } from 'node:fs'
import path from 'node:path'
import { HUB_TOPICS, type HubTopic, TOPIC_PREFIX } from '../../protocol/hub-messages.ts'

/**
 * What an external Mosquitto 2.0 needs to serve as the cloud's broker (docs/mqtt-broker.md): its
 * configuration file and the initial state of its dynamic-security plugin, which holds the cloud's own client
 * (the admin that manages hubs and reads their messages) and, as hubs enrol, one client and role per hub
 * (cloud/broker/dynsec.ts). `cloud mosquitto-config --dir DIR` writes these; tests start Mosquitto from them.
 */

export const MOSQUITTO_CONF = 'mosquitto.conf'
export const DYNSEC_FILE = 'dynamic-security.json'
export const CLOUD_PASSWORD_FILE = 'cloud-password'
/** The role of the cloud's own client in the dynamic-security plugin. */
export const CLOUD_ROLE = 'print-hub-cloud'
/** The shared-subscription group every cloud node joins: each hub message goes to one node (MQTT 5 §4.8.2). */
export const SHARE_GROUP = 'print-hub-cloud'

/** Where Debian installs the plugin, per architecture. */
const PLUGIN_CANDIDATES = [
  '/usr/lib/x86_64-linux-gnu/mosquitto_dynamic_security.so',
  '/usr/lib/aarch64-linux-gnu/mosquitto_dynamic_security.so',
  '/usr/lib/arm-linux-gnueabihf/mosquitto_dynamic_security.so',
  '/usr/lib/mosquitto_dynamic_security.so',
]

/** The dynamic-security plugin installed here, if any. */
export function findDynsecPlugin(): string | undefined {
  return PLUGIN_CANDIDATES.find((candidate) => existsSync(candidate))
}

export interface MosquittoConfOptions {
  /** Address and port of the listener (MQTT_URL's host and port). */
  host: string
  port: number
  /** The directory holding the configuration, the plugin's state and the broker's persistence (absolute). */
  dir: string
  pluginPath: string
  /** MQTT over TLS (mqtts:// in MQTT_URL): PEM files. */
  tls?: { certFile: string; keyFile: string }
  /** Largest packet the broker accepts (MQTT_MAX_PACKET_BYTES). */
  maxPacketBytes: number
  /** Clients at once on the listener: the hubs' front's (MQTT_MAX_CONNECTIONS) and the cloud nodes'. */
  maxConnections?: number
}

export function mosquittoConfText(options: MosquittoConfOptions): string {
  const { dir } = options
  return [
    '# Written by `npm run -s cloud -- mosquitto-config`; start with: mosquitto -c <this file>',
    '# Hubs and the cloud authenticate through the dynamic-security plugin; nobody connects anonymously.',
    'per_listener_settings false',
    'allow_anonymous false',
    `listener ${options.port} ${options.host}`,
    // Beyond it Mosquitto closes a new connection at once; its file limit must be higher (docs/mqtt-broker.md).
    `max_connections ${options.maxConnections ?? -1}`,
    ...(options.tls ? [`certfile ${options.tls.certFile}`, `keyfile ${options.tls.keyFile}`] : []),
    `plugin ${options.pluginPath}`,
    `plugin_opt_config_file ${path.join(dir, DYNSEC_FILE)}`,
    // Every session, the nodes' and the hubs', now ends with its connection (docs/several-nodes.md: nodes
    // come and go), so the store holds little over a restart; it stays on at no cost.
    'persistence true',
    `persistence_location ${dir}${path.sep}`,
    // A node's backlog of hub messages beyond those in flight (a reconnect storm): never drop one the broker
    // acknowledged to a hub.
    'max_queued_messages 1000000',
    // Every packet, the CONNECT included: Mosquitto 2.0 has no smaller bound before login, nor a connect
    // timeout. Hubs reach it through the front that keeps those (hub-front-config.ts).
    `max_packet_size ${options.maxPacketBytes}`,
    // STACK-NOTES: Nagle plus delayed ACKs costs ~88 ms per QoS 1 round trip.
    'set_tcp_nodelay true',
    'log_dest stderr',
    'log_type error',
    'log_type warning',
    'log_type notice',
    'log_type information',
    'connection_messages true',
    '',
  ].join('\n')
}

/** A dynamic-security ACL entry. */
export interface DynsecAcl {
  acltype:
    | 'publishClientSend'
    | 'publishClientReceive'
    | 'subscribeLiteral'
    | 'subscribePattern'
    | 'unsubscribeLiteral'
    | 'unsubscribePattern'
  topic: string
  priority?: number
  allow: boolean
}

const topicsFrom = (from: 'hub' | 'cloud') =>
  (Object.keys(HUB_TOPICS) as HubTopic[]).filter((topic) => HUB_TOPICS[topic].from === from)

/**
 * The cloud's client: it runs the plugin's `$CONTROL` API, publishes the cloud's topics to any hub and reads
 * the hubs' topics of every hub, as one member of the shared-subscription group.
 */
export function cloudRoleAcls(): DynsecAcl[] {
  return [
    { acltype: 'publishClientSend', topic: '$CONTROL/dynamic-security/#', allow: true },
    { acltype: 'subscribePattern', topic: '$CONTROL/dynamic-security/#', allow: true },
    { acltype: 'publishClientReceive', topic: '$CONTROL/dynamic-security/#', allow: true },
    ...topicsFrom('cloud').map(
      (topic): DynsecAcl => ({
        acltype: 'publishClientSend',
        topic: `${TOPIC_PREFIX}/+/${topic}`,
        allow: true,
      }),
    ),
    ...topicsFrom('hub').flatMap((topic): DynsecAcl[] => [
      {
        acltype: 'subscribePattern',
        topic: `$share/${SHARE_GROUP}/${TOPIC_PREFIX}/+/${topic}`,
        allow: true,
      },
      // Mosquitto checks a shared subscription against its topic filter without the `$share/group/` part.
      { acltype: 'subscribePattern', topic: `${TOPIC_PREFIX}/+/${topic}`, allow: true },
      { acltype: 'publishClientReceive', topic: `${TOPIC_PREFIX}/+/${topic}`, allow: true },
    ]),
  ]
}

/**
 * A hub's role: it publishes its own hub-direction topics and subscribes, literally, to its own
 * cloud-direction topics; nothing else (the plugin's defaults refuse every other publish and subscription).
 * Mosquitto 2.0.11's plugin delivers to a client with roles only what a `publishClientReceive` entry allows.
 */
export function hubRoleAcls(agentId: string): DynsecAcl[] {
  return [
    ...topicsFrom('hub').map(
      (topic): DynsecAcl => ({
        acltype: 'publishClientSend',
        topic: `${TOPIC_PREFIX}/${agentId}/${topic}`,
        allow: true,
      }),
    ),
    ...topicsFrom('cloud').flatMap((topic): DynsecAcl[] => [
      { acltype: 'subscribeLiteral', topic: `${TOPIC_PREFIX}/${agentId}/${topic}`, allow: true },
      { acltype: 'publishClientReceive', topic: `${TOPIC_PREFIX}/${agentId}/${topic}`, allow: true },
    ]),
  ]
}

/** The plugin's stored password: PBKDF2-HMAC-SHA512 with a 12-byte salt, as mosquitto_ctrl writes it. */
export function dynsecPassword(password: string, iterations = 101) {
  const salt = randomBytes(12)
  const hash = pbkdf2Sync(password, salt, iterations, 64, 'sha512')
  return { password: hash.toString('base64'), salt: salt.toString('base64'), iterations }
}

interface DynsecState {
  defaultACLAccess?: Record<string, boolean>
  clients?: { username: string; [key: string]: unknown }[]
  groups?: unknown[]
  roles?: { rolename: string; [key: string]: unknown }[]
  [key: string]: unknown
}

/**
 * The plugin's state with the cloud's client and role set to `username`/`password` and the defaults
 * deny-by-default; everything else in `existing` (hubs provisioned so far) is kept.
 */
export function dynsecState(username: string, password: string, existing?: string): string {
  const state: DynsecState = existing ? (JSON.parse(existing) as DynsecState) : {}
  state.defaultACLAccess = {
    publishClientSend: false,
    publishClientReceive: true,
    subscribe: false,
    unsubscribe: true,
  }
  state.clients = [
    ...(state.clients ?? []).filter((client) => client.username !== username),
    {
      username,
      textname: 'print-hub cloud nodes',
      roles: [{ rolename: CLOUD_ROLE }],
      ...dynsecPassword(password),
    },
  ]
  state.groups ??= []
  state.roles = [
    ...(state.roles ?? []).filter((role) => role.rolename !== CLOUD_ROLE),
    { rolename: CLOUD_ROLE, acls: cloudRoleAcls().map((acl) => ({ priority: 0, ...acl })) },
  ]
  return `${JSON.stringify(state, null, 2)}\n`
}
