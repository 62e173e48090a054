import { Counter, Gauge, Histogram, type Registry } from 'prom-client'
import type { WebhookRepository } from '../storage/webhooks.ts'
import type { AttemptResultKind, DeliveryObserver } from '../webhooks/delivery-worker.ts'
import { PREFIX } from './metrics-registry.ts'

const RESULTS: readonly AttemptResultKind[] = ['delivered', 'retrying', 'failed']

/**
 * Counts this node's webhook delivery attempts by what followed them, and the lag of each delivered one: from
 * when it was first due (its event written) to the endpoint's 2xx, retries included. Each attempt is made by
 * one node, so the sums over every node are the fleet's figures.
 */
export function webhookDeliveryMetrics(registry: Registry): DeliveryObserver {
  const attempts = new Counter({
    name: `${PREFIX}webhook_delivery_attempts_total`,
    help: 'Webhook delivery attempts, by outcome: delivered (2xx), retrying (failed, tried again later) or failed (retries used up).',
    labelNames: ['outcome'] as const,
    registers: [registry],
  })
  for (const outcome of RESULTS) attempts.inc({ outcome }, 0)
  const lag = new Histogram({
    name: `${PREFIX}webhook_delivery_lag_seconds`,
    help: 'Time from a webhook delivery being first due to the endpoint accepting it, retries included.',
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 300, 1800, 7200, 6 * 3600, 24 * 3600],
    registers: [registry],
  })
  return {
    attempted(outcome, delivery, atMs) {
      attempts.inc({ outcome })
      if (outcome === 'delivered') lag.observe(Math.max(0, atMs - delivery.createdAtMs) / 1000)
    },
  }
}

/** Gauges of the deliveries waiting, read from the database when Prometheus scrapes (the same on every node). */
export function registerWebhookBacklogGauges(
  registry: Registry,
  backlog: WebhookRepository['backlog'],
  now: () => number = Date.now,
): void {
  let read: { at: number; value: ReturnType<typeof backlog> } | undefined
  // One query for both gauges of a scrape.
  const current = () => {
    const at = now()
    if (!read || at - read.at >= 1000) {
      const value = backlog()
      value.catch(() => {
        if (read?.value === value) read = undefined
      })
      read = { at, value }
    }
    return read
  }
  new Gauge({
    name: `${PREFIX}webhook_deliveries_pending`,
    help: 'Webhook deliveries not delivered or failed yet (due now or waiting for a retry).',
    registers: [registry],
    async collect() {
      this.set((await current().value).pending)
    },
  })
  new Gauge({
    name: `${PREFIX}webhook_delivery_oldest_due_seconds`,
    help: 'How long the pending webhook delivery due first has been due (0 when none is due yet).',
    registers: [registry],
    async collect() {
      const { at, value } = current()
      const { oldestDueMs } = await value
      this.set(oldestDueMs === null ? 0 : Math.max(0, at - oldestDueMs) / 1000)
    },
  })
}
