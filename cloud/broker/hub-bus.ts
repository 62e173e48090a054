import type { Aedes } from 'aedes'
import type { Logger } from 'pino'
import { Compile } from 'typebox/compile'
import {
  HUB_TOPICS,
  type HubPayload,
  type HubTopic,
  hubTopic,
  PROTOCOL_VERSION,
  parseHubTopic,
  TOPIC_PREFIX,
} from '../../protocol/hub-messages.ts'

/**
 * The cloud's small publish/subscribe interface to hubs (DESIGN: beyond one machine). Payloads are JSON,
 * checked against the protocol schemas on the way in; a message that fails is logged and dropped.
 */
export interface HubBus {
  /** QoS 1 to one hub. */
  publish<T extends HubTopic>(agentId: string, topic: T, payload: HubPayload<T>): Promise<void>
  /** Every hub's messages on `topic`, already validated. */
  subscribe<T extends HubTopic>(
    topic: T,
    handler: (agentId: string, payload: HubPayload<T>) => void | Promise<void>,
  ): Promise<void>
}

const validators = Object.fromEntries(
  (Object.keys(HUB_TOPICS) as HubTopic[]).map((topic) => [topic, Compile(HUB_TOPICS[topic].schema)]),
) as { [T in HubTopic]: ReturnType<typeof Compile<(typeof HUB_TOPICS)[T]['schema']>> }

/** Parses and validates a payload for `topic`; null (with the reason) when it does not conform. */
export function decodeHubMessage<T extends HubTopic>(
  topic: T,
  payload: Buffer | string,
): { ok: true; value: HubPayload<T> } | { ok: false; reason: string } {
  let value: unknown
  try {
    value = JSON.parse(payload.toString())
  } catch {
    return { ok: false, reason: 'not JSON' }
  }
  const version = (value as { v?: unknown } | null)?.v
  if (version !== PROTOCOL_VERSION)
    return { ok: false, reason: `unknown protocol version ${String(version)}` }
  const validator = validators[topic]
  if (!validator.Check(value)) {
    const first = validator.Errors(value)[0]
    return { ok: false, reason: `${first?.instancePath ?? ''} ${first?.message ?? 'invalid'}`.trim() }
  }
  return { ok: true, value: value as HubPayload<T> }
}

export function createEmbeddedHubBus(broker: Aedes, logger: Logger): HubBus {
  return {
    publish(agentId, topic, payload) {
      return new Promise((resolve, reject) => {
        broker.publish(
          {
            cmd: 'publish',
            topic: hubTopic(agentId, topic),
            payload: Buffer.from(JSON.stringify(payload)),
            qos: 1,
            retain: false,
            dup: false,
          },
          (error) => (error ? reject(error) : resolve()),
        )
      })
    },
    subscribe(topic, handler) {
      return new Promise((resolve) => {
        broker.subscribe(
          `${TOPIC_PREFIX}/+/${topic}`,
          (packet, done) => {
            done()
            const target = parseHubTopic(packet.topic)
            if (!target) return
            const decoded = decodeHubMessage(topic, packet.payload)
            if (!decoded.ok) {
              logger.warn({ agent_id: target.agentId, topic, reason: decoded.reason }, 'hub message dropped')
              return
            }
            // A handler that throws, even synchronously, is logged; it never escapes into the broker.
            Promise.resolve()
              .then(() => handler(target.agentId, decoded.value))
              .catch((error: unknown) => {
                logger.error({ err: error, agent_id: target.agentId, topic }, 'hub message handler failed')
              })
          },
          resolve,
        )
      })
    },
  }
}
