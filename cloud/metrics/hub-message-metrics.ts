import { Counter, type Registry } from 'prom-client'
import type { HubBus } from '../broker/hub-bus.ts'
import { PREFIX } from './metrics-registry.ts'

/**
 * Counts hub messages by topic (the few of protocol/hub-messages.ts): those this node received and handed to a
 * handler (valid ones; an invalid one is logged and dropped before), and those it published and the broker
 * took. With shared subscriptions each hub message reaches one node: the sums are the fleet's figures.
 */
export function countedHubBus(bus: HubBus, registry: Registry): HubBus {
  const received = new Counter({
    name: `${PREFIX}mqtt_messages_received_total`,
    help: 'Valid hub messages this node received, by topic.',
    labelNames: ['topic'] as const,
    registers: [registry],
  })
  const published = new Counter({
    name: `${PREFIX}mqtt_messages_published_total`,
    help: 'Messages this node published to hubs and the broker accepted, by topic.',
    labelNames: ['topic'] as const,
    registers: [registry],
  })
  return {
    async publish(agentId, topic, payload) {
      await bus.publish(agentId, topic, payload)
      published.inc({ topic })
    },
    subscribe(topic, handler) {
      return bus.subscribe(topic, (agentId, payload) => {
        received.inc({ topic })
        return handler(agentId, payload)
      })
    },
  }
}
