import { Type } from 'typebox'
import { maxHubPacketBytes } from '../broker/hub-packet-bound.ts'
import { int, MiB, optionalFile, port, url } from './setting-builders.ts'

/** The MQTT broker hubs connect to: the embedded one, or an external Mosquitto (MQTT_URL). */
export const BROKER_SETTINGS = {
  mqttPort: port('MQTT_PORT', 1883, 'embedded MQTT broker port'),
  mqttTlsCertFile: optionalFile('MQTT_TLS_CERT_FILE', 'PEM certificate: MQTT over TLS'),
  mqttTlsKeyFile: optionalFile('MQTT_TLS_KEY_FILE', 'PEM private key: MQTT over TLS'),
  mqttPublicUrl: url(
    'MQTT_PUBLIC_URL',
    ['mqtt', 'mqtts'],
    'where hubs reach the broker; empty (default): the host name each hub used to reach the cloud, with MQTT_PORT',
    true,
  ),
  mqttUrl: url(
    'MQTT_URL',
    ['mqtt', 'mqtts'],
    'external MQTT broker (Mosquitto 2.0 set up by `cloud mosquitto-config`) the cloud connects to; empty (default): the embedded broker on MQTT_PORT',
    true,
  ),
  mqttAdminUsername: Type.String({
    minLength: 1,
    maxLength: 128,
    env: 'MQTT_ADMIN_USERNAME',
    default: 'print-hub-cloud',
    description:
      'with MQTT_URL: the cloud’s own user name on the broker (as `cloud mosquitto-config` wrote it)',
  }),
  mqttAdminPasswordFile: optionalFile(
    'MQTT_ADMIN_PASSWORD_FILE',
    'with MQTT_URL: file holding the cloud’s broker password (DIR/cloud-password, written by `cloud mosquitto-config`)',
  ),
  mqttClientId: Type.String({
    pattern: '^[A-Za-z0-9._-]{0,64}$',
    env: 'MQTT_CLIENT_ID',
    default: '',
    description:
      'with MQTT_URL: this node’s MQTT client id, unique among the nodes running at once (nothing is kept under it once the node has gone, so it need not be reused); default cloud-<hostname>-<PORT>-<random>',
  }),
  hubKeepaliveSeconds: int('HUB_KEEPALIVE_SECONDS', 1, 3600, 30, 'a lost hub is noticed within this'),
  mqttConnectTimeoutMs: int(
    'MQTT_CONNECT_TIMEOUT_MS',
    500,
    60000,
    5000,
    'time a new MQTT connection has to send its CONNECT (TLS handshake included)',
  ),
  // 256 MiB - 1: the largest Remaining Length MQTT 3.1.1 §2.2.3 can express.
  mqttMaxPacketBytes: int(
    'MQTT_MAX_PACKET_BYTES',
    4096,
    256 * MiB - 1,
    maxHubPacketBytes(),
    'largest MQTT packet from an authenticated hub; default: the largest hub message the schemas allow',
  ),
  mqttMaxPendingConnections: int(
    'MQTT_MAX_PENDING_CONNECTIONS',
    1,
    100000,
    512,
    'MQTT connections not authenticated yet; beyond it new ones are closed at once',
  ),
  mqttMaxConnections: int(
    'MQTT_MAX_CONNECTIONS',
    1,
    1000000,
    20000,
    'with MQTT_URL: hub connections the broker holds at once, pending ones included (`cloud mosquitto-config` writes it into the hubs’ front and Mosquitto)',
  ),
}
