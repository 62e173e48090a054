import type { Aedes } from 'aedes'
import type { Logger } from 'pino'
import { decodeHubMessage } from '../../protocol/hub-message-decoder.ts'
import {
  type HubPayload,
  type HubTopic,
  hubTopic,
  parseHubTopic,
  TOPIC_PREFIX,
} from '../../protocol/hub-messages.ts'

/**
 * The cloud's small publish/subscribe interface to hubs (docs/architecture.md: growing beyond one machine). Payloads are JSON,
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
