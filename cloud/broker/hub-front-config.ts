/**
 * The hubs' front for an external Mosquitto (docs/mqtt-broker.md): HAProxy 2.6 in TCP mode, listening where
 * hubs connect and passing a connection on to Mosquitto only once it has sent a whole, valid CONNECT. It gives
 * Mosquitto 2.0 the bounds the embedded broker keeps before login (connection-guard.ts), which Mosquitto has
 * no setting for: it never closes a socket that sends nothing, and its one `max_packet_size` also bounds the
 * CONNECT, so a CONNECT may announce as much as the largest hub message (about 15 MB) and Mosquitto buffers it.
 * `cloud mosquitto-config` writes this file beside mosquitto.conf; start it with `haproxy -f <file>`.
 */

export const HUB_FRONT_CONF = 'hub-front.cfg'
/** Certificate and key in one PEM file, as HAProxy's `crt` reads them (MQTT over TLS at the front). */
export const HUB_FRONT_PEM = 'hub-front.pem'
/** Connections Mosquitto takes beyond the hubs' (MQTT_MAX_CONNECTIONS): the cloud nodes' own, on MQTT_URL. */
export const CLOUD_NODE_CONNECTIONS = 64

export interface HubFrontOptions {
  /** Where hubs connect (the port of MQTT_PUBLIC_URL). */
  listen: { host: string; port: number }
  /** TLS at the front: the PEM file holding certificate and key. */
  pemFile?: string
  /** Mosquitto's listener (MQTT_URL), and whether it speaks TLS (mqtts://). */
  broker: { host: string; port: number; tls: boolean }
  /** MQTT_CONNECT_TIMEOUT_MS: time a connection has to send its whole CONNECT (TLS handshake included). */
  connectTimeoutMs: number
  /** The largest CONNECT accepted (connection-guard.ts MAX_CONNECT_PACKET_BYTES). */
  maxConnectBytes: number
  /** MQTT_MAX_PENDING_CONNECTIONS: connections that have not sent a valid CONNECT yet; beyond, closed at once. */
  maxPendingConnections: number
  /** MQTT_MAX_CONNECTIONS: hubs' connections at once, pending ones included; beyond, closed at once. */
  maxConnections: number
  /** HUB_KEEPALIVE_SECONDS: Mosquitto closes a silent hub within it; the front waits twice as long. */
  keepaliveSeconds: number
}

const HEX = '0123456789ABCDEF'
const hexByte = (value: number) => `${HEX[value >> 4]}${HEX[value & 15]}`

/** A character class of the hex digits from `digit` (0-15) to F. */
const hexDigitsFrom = (digit: number) =>
  digit === 15 ? 'F' : `[${digit < 9 ? `${digit}-` : ''}${digit <= 9 ? '9A' : HEX[digit]}-F]`

/** A regular expression for one byte, as two upper-case hex digits, of at least `value` (0-255). */
function hexByteAtLeast(value: number): string {
  const high = value >> 4
  const sameHigh = `${HEX[high]}${hexDigitsFrom(value & 15)}`
  return high === 15 ? sameHigh : `(${sameHigh}|${hexDigitsFrom(high + 1)}[0-9A-F])`
}

/**
 * A regular expression, over the hex of a connection's first three bytes, that matches a CONNECT announcing
 * more than `maxBytes`: the fixed header is the type byte 0x10, then the Remaining Length as a variable byte
 * integer (MQTT 3.1.1 §2.2.3, MQTT 5 §1.5.5), seven bits a byte, least significant first, the high bit set on
 * every byte but the last. HAProxy can only match bytes, so the limit is spelt out byte by byte; it must need
 * a two-byte Remaining Length (131 to 16,386 bytes).
 */
export function connectOverLimitPattern(maxBytes: number): string {
  const maxRemaining = maxBytes - 3
  if (maxRemaining < 128 || maxRemaining > 16383)
    throw new Error(`${maxBytes}: not a two-byte Remaining Length`)
  const high = maxRemaining >> 7
  const low = maxRemaining & 127
  // A continued first byte, then a second byte over `high` (or itself continued: three bytes or more).
  const alternatives = [`${hexDigitsFrom(8)}[0-9A-F]${hexByteAtLeast(high + 1)}`]
  // A second byte of exactly `high` after a first byte over `low`.
  if (low < 127) alternatives.push(`${hexByteAtLeast(0x80 + low + 1)}${hexByte(high)}`)
  return `^10(${alternatives.join('|')})`
}

const address = (host: string, port: number) => `${host.includes(':') ? `[${host}]` : host}:${port}`

export function hubFrontConfText(options: HubFrontOptions): string {
  const { broker } = options
  const connectTimeout = `${options.connectTimeoutMs}ms`
  // Sized so that HAProxy itself accepts the connections its rules then close.
  const frontendMaxconn = options.maxConnections + options.maxPendingConnections + 1
  const valid = '{ req.payload(0,0),mqtt_is_valid }'
  return [
    '# Written by `npm run -s cloud -- mosquitto-config`; start with: haproxy -f <this file>',
    '# The hubs’ front for Mosquitto (docs/mqtt-broker.md): a connection reaches Mosquitto only with a whole,',
    '# valid CONNECT, sent within the connect timeout; the same bounds as the embedded broker before login.',
    'global',
    `  maxconn ${frontendMaxconn}`,
    '  log stderr format short local0 notice',
    '',
    'defaults',
    '  mode tcp',
    '  log global',
    '  option tcplog',
    '  option dontlognull',
    `  timeout connect ${connectTimeout}`,
    // Before the CONNECT is through: silence on either side ends the connection (TLS handshake included).
    `  timeout client ${connectTimeout}`,
    `  timeout server ${connectTimeout}`,
    // Once it is: Mosquitto closes a silent hub after its keepalive; this only catches a vanished peer.
    `  timeout tunnel ${Math.max(2 * options.keepaliveSeconds, 60)}s`,
    '  timeout client-fin 10s',
    '',
    '# Connections that sent a valid CONNECT, counted by a one-entry table: the rest are pending.',
    'backend connected',
    '  stick-table type integer size 1 store conn_cur',
    '',
    'frontend hubs',
    `  bind ${address(options.listen.host, options.listen.port)}${options.pemFile ? ` ssl crt ${options.pemFile}` : ''}`,
    `  maxconn ${frontendMaxconn}`,
    `  tcp-request connection reject if { fe_conn gt ${options.maxConnections} }`,
    '  tcp-request connection set-var(sess.connected) int(0)',
    '  tcp-request connection set-var(sess.connected) int(1),table_conn_cur(connected)',
    `  tcp-request connection reject if { fe_conn,sub(sess.connected) gt ${options.maxPendingConnections} }`,
    `  tcp-request inspect-delay ${connectTimeout}`,
    // The first packet must be a CONNECT [MQTT-3.1.0-1], refused on its first byte otherwise; one that
    // announces more than the limit is refused on its first three bytes, before its body.
    '  tcp-request content reject unless { req.payload(0,1) -m bin 10 }',
    `  tcp-request content reject if { req.payload(0,3),hex -m reg ${connectOverLimitPattern(options.maxConnectBytes)} }`,
    `  tcp-request content track-sc0 int(1) table connected if ${valid}`,
    `  tcp-request content accept if ${valid}`,
    // Anything else, or a CONNECT still incomplete when the connect timeout ends: closed.
    '  tcp-request content reject',
    '  default_backend mosquitto',
    '',
    'backend mosquitto',
    `  server mosquitto ${address(broker.host, broker.port)}${
      broker.tls ? ` ssl verify required ca-file @system-ca verifyhost ${broker.host}` : ''
    }`,
    '',
  ].join('\n')
}
