import { Gauge, type Registry } from 'prom-client'
import type { Storage } from '../storage/storage.ts'
import { PREFIX } from './metrics-registry.ts'

/** What the state gauges read besides the database. */
export interface StateSources {
  storage: Storage
  /** Whether the node's broker takes hub messages: the embedded listener, or the connection to MQTT_URL. */
  brokerReady: () => boolean
  /** Embedded broker only: its connected MQTT clients. */
  brokerClients?: () => number
  /** Hub messages being handled or waiting their turn (HandlerRetry). */
  hubMessagesInProgress: () => number
}

/** Reads shared by the scrapes of one second (two Prometheus servers, or gauges reading one query). */
const SHARED_READ_MS = 1000

/**
 * Gauges read when Prometheus scrapes: queue depths and the hubs and printers online from the database (one
 * aggregate query each, shared for a second; the same on every node, so take one node's, not their sum), and
 * this node's broker, hub message queue and database pool.
 */
export function registerStateGauges(registry: Registry, sources: StateSources): void {
  const { storage } = sources
  const unfinished = shared(() => storage.fleetCounts.unfinishedJobsByStatus())
  const online = shared(() => storage.fleetCounts.online())
  const registers = [registry]
  // First, so that the pool is read before this scrape's own queries take connections of it.
  if (storage.poolStats?.() !== undefined) {
    new Gauge({
      name: `${PREFIX}database_pool_connections`,
      help: 'PostgreSQL connections this node holds, by state (idle or active).',
      labelNames: ['state'] as const,
      registers,
      collect() {
        const stats = storage.poolStats?.()
        if (!stats) return
        this.set({ state: 'idle' }, stats.idle)
        this.set({ state: 'active' }, stats.total - stats.idle)
      },
    })
    new Gauge({
      name: `${PREFIX}database_pool_waiting_queries`,
      help: 'Queries waiting for a PostgreSQL connection of this node.',
      registers,
      collect() {
        this.set(storage.poolStats?.()?.waiting ?? 0)
      },
    })
  }
  new Gauge({
    name: `${PREFIX}print_jobs_unfinished`,
    help: 'Print jobs not finished yet (the queues of every account), by status.',
    labelNames: ['status'] as const,
    registers,
    async collect() {
      for (const [status, count] of Object.entries(await unfinished())) this.set({ status }, count)
    },
  })
  new Gauge({
    name: `${PREFIX}hubs_online`,
    help: 'Hubs online.',
    registers,
    async collect() {
      this.set((await online()).hubs)
    },
  })
  new Gauge({
    name: `${PREFIX}printers_online`,
    help: 'Printers online (their hub is online and its latest state report names them).',
    registers,
    async collect() {
      this.set((await online()).printers)
    },
  })
  new Gauge({
    name: `${PREFIX}mqtt_broker_ready`,
    help: 'Whether this node takes hub messages (1) or not (0): the embedded broker listens, or the connection to MQTT_URL is up and subscribed.',
    registers,
    collect() {
      this.set(sources.brokerReady() ? 1 : 0)
    },
  })
  const { brokerClients } = sources
  if (brokerClients)
    new Gauge({
      name: `${PREFIX}mqtt_clients_connected`,
      help: 'MQTT clients connected to the embedded broker (hubs).',
      registers,
      collect() {
        this.set(brokerClients())
      },
    })
  new Gauge({
    name: `${PREFIX}hub_messages_in_progress`,
    help: 'Hub messages this node is handling or that wait their turn.',
    registers,
    collect() {
      this.set(sources.hubMessagesInProgress())
    },
  })
}

/** `read`, its answer reused by the calls of the next SHARED_READ_MS. */
function shared<T>(read: () => Promise<T>): () => Promise<T> {
  let last: { at: number; value: Promise<T> } | undefined
  return () => {
    const now = Date.now()
    if (!last || now - last.at >= SHARED_READ_MS) {
      const value = read()
      // A failed read is not reused: the next scrape asks again.
      value.catch(() => {
        if (last?.value === value) last = undefined
      })
      last = { at: now, value }
    }
    return last.value
  }
}
