import { HUB_TOPICS, type HubTopic, hubTopic } from '../../protocol/hub-messages.ts'
import { maxJsonBytes } from './json-size-bound.ts'

/** An agent id is a UUID (36 characters). */
const LONGEST_AGENT_ID = '00000000-0000-0000-0000-000000000000'

/**
 * The largest PUBLISH packet a hub sends (MQTT 3.1.1 §3.3): a fixed header of at most 5 bytes, the topic
 * name with its 2-byte length, a 2-byte packet identifier (QoS 1), and the largest JSON payload of any
 * hub → cloud topic at its schema bounds (`state` with 256 printers). Properties a newer hub adds beyond the
 * schema are not counted. Default of MQTT_MAX_PACKET_BYTES, so the limit follows the schemas.
 */
export function maxHubPacketBytes(): number {
  const topics = (Object.keys(HUB_TOPICS) as HubTopic[]).filter((topic) => HUB_TOPICS[topic].from === 'hub')
  return Math.max(
    ...topics.map(
      (topic) =>
        5 +
        2 +
        Buffer.byteLength(hubTopic(LONGEST_AGENT_ID, topic)) +
        2 +
        maxJsonBytes(HUB_TOPICS[topic].schema, topic),
    ),
  )
}
