import { readFileSync } from 'node:fs'
import path from 'node:path'
import type { FastifyInstance } from 'fastify'
import type { Logger } from 'pino'
import { buildApp } from './app.ts'
import { type EmbeddedBroker, startBroker } from './broker/broker.ts'
import { externalBrokerSettings } from './broker/external-broker.ts'
import { HandlerRetry } from './broker/handler-retry.ts'
import { watchRevokedHubs } from './broker/revoked-hubs.ts'
import { refuseBusyPorts } from './busy-ports.ts'
import type { CloudConfig } from './config.ts'
import { Dispatcher } from './dispatch/dispatcher.ts'
import { SilentJobs } from './dispatch/silent-jobs.ts'
import { Housekeeping } from './housekeeping/housekeeping.ts'
import { createLogger } from './logging.ts'
import { countedHubBus } from './metrics/hub-message-metrics.ts'
import { countedPrintJobs } from './metrics/job-metrics.ts'
import { startMetricsListener } from './metrics/metrics-listener.ts'
import { createMetricsRegistry } from './metrics/metrics-registry.ts'
import { registerStateGauges } from './metrics/state-gauges.ts'
import { registerWebhookBacklogGauges, webhookDeliveryMetrics } from './metrics/webhook-metrics.ts'
import { AnnounceAfterReconnect } from './presence/announce-after-reconnect.ts'
import { endEmbeddedSessions } from './presence/embedded-sessions.ts'
import { HubPresence } from './presence/hub-presence.ts'
import { HubStateReports } from './presence/hub-state.ts'
import { watchLanChanges } from './presence/lan-refresh.ts'
import { takeRevokedHubOffline } from './presence/revoked-hub.ts'
import { reachableAddresses } from './reachable-addresses.ts'
import { ReleaseCatalog } from './releases/release-catalog.ts'
import { ReleaseRollout } from './releases/release-rollout.ts'
import { createBlobStore } from './storage/blob-store.ts'
import { openBrokerLookups } from './storage/broker-lookups.ts'
import { lockDataDir } from './storage/data-dir-lock.ts'
import { redactedDatabaseUrl } from './storage/database-url.ts'
import { DATABASE_FILE, openStorage, type Storage } from './storage/storage.ts'
import { DeliveryWorker, type DeliveryWorkerOptions } from './webhooks/delivery-worker.ts'
import { storedEventSubjects } from './webhooks/event-payload.ts'
import { webhookSecretBox, webhookSecretKey } from './webhooks/secret-box.ts'

export interface RunningCloud {
  app: FastifyInstance
  storage: Storage
  broker: EmbeddedBroker
  dispatcher: Dispatcher
  /** Delivers webhook events (cloud/webhooks/); `nudge()` makes it look for due deliveries at once. */
  webhookDeliveries: DeliveryWorker
  apiUrl: string
  /** The metrics listener's `GET /metrics` (METRICS_PORT); undefined when it is off. */
  metricsUrl?: string
  /**
   * Stops taking requests, lets in-flight ones finish, stops taking hub messages and waits for those being
   * handled, then closes the broker and the database, and releases DATA_DIR.
   */
  close(): Promise<void>
}

/** How soon a revoked hub's MQTT session is closed (the CLI that revokes it has only the database). */
const REVOCATION_CHECK_MS = 1000
/** How often each node looks for LAN API changes to tell hubs of (presence/lan-refresh.ts). */
const LAN_CHANGE_CHECK_MS = 1000

/** What tests change beyond the configuration. */
export interface CloudSeams {
  /** The webhook delivery worker's knobs: a short retry schedule, the fetcher's resolver and connector, a CA. */
  webhookDelivery?: Pick<
    DeliveryWorkerOptions,
    'schedule' | 'fetchSeams' | 'attemptTimeoutMs' | 'pollIntervalMs' | 'now' | 'random'
  >
}

/** Starts the whole cloud: storage, the embedded broker, the dispatcher, webhook deliveries and the HTTP API. */
export async function startCloud(
  config: CloudConfig,
  logger: Logger = createLogger(config),
  seams: CloudSeams = {},
): Promise<RunningCloud> {
  // Refused before anything is touched: a busy port, or DATA_DIR served by another cloud. With MQTT_URL the
  // cloud listens for no MQTT, so MQTT_PORT (perhaps Mosquitto's own, on this host) is not its to check.
  await refuseBusyPorts({ ...config, mqttPort: config.mqttUrl ? 0 : config.mqttPort })
  // DATA_DIR's lock keeps a second cloud off its SQLite file. On PostgreSQL DATA_DIR holds only documents (and
  // releases), in a directory every node mounts: the nodes share it, so none locks it.
  const lock = config.databaseUrl ? { release() {} } : lockDataDir(config.dataDir)
  const cleanups: (() => Promise<void> | void)[] = [() => lock.release()]
  const storageSettings = {
    dataDir: config.dataDir,
    databaseUrl: config.databaseUrl,
    busyTimeoutMs: config.databaseBusyTimeoutMs,
  }
  let storage: Storage
  try {
    storage = await openStorage(storageSettings)
  } catch (error) {
    lock.release()
    throw error
  }
  cleanups.push(() => storage.close())
  // Prometheus metrics, when METRICS_PORT asks for them: every job change is counted where the lifecycle
  // applies it (the one repository all its users share), every hub message where the bus carries it.
  const metrics = config.metricsPort === '' ? undefined : createMetricsRegistry()
  if (metrics) storage.printJobs = countedPrintJobs(storage.printJobs, metrics)
  const unwind = async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
  }
  try {
    if (!config.mqttUrl) await endEmbeddedSessions(storage)
    // The embedded broker's own hub lookups; an external broker (MQTT_URL) authenticates hubs itself.
    const hubLookups = config.mqttUrl ? undefined : openBrokerLookups(storageSettings)
    if (hubLookups) cleanups.push(() => hubLookups.close())
    const tls =
      config.mqttTlsCertFile && config.mqttTlsKeyFile
        ? { cert: readFileSync(config.mqttTlsCertFile), key: readFileSync(config.mqttTlsKeyFile) }
        : undefined
    let announcer: AnnounceAfterReconnect | undefined // once the bus exists
    const broker = await startBroker({
      host: config.host,
      port: config.mqttPort,
      logger: logger.child({ name: 'mqtt' }),
      findAgentByCredential: (hash) => hubLookups?.findAgentByCredential(hash),
      ...(tls && { tls }),
      ...externalBrokerSettings(config, {
        revokedSince: (since) => storage.agents.revokedSince(since),
        hubRevoked: (agentId) => takeRevokedHubOffline(storage, agentId),
        resubscribed: (subscribedAt) => announcer?.resubscribed(subscribedAt),
      }),
      limits: {
        connectTimeoutMs: config.mqttConnectTimeoutMs,
        maxPacketBytes: config.mqttMaxPacketBytes,
        maxPendingConnections: config.mqttMaxPendingConnections,
      },
    })
    cleanups.push(() => broker.close())
    // An external broker cuts revoked hubs off itself (external-broker.ts).
    if (hubLookups) {
      const revokedHubs = watchRevokedHubs({
        revokedSince: (since) => hubLookups.revokedSince(since),
        disconnect: (agentId) => broker.disconnect(agentId),
        logger: logger.child({ name: 'mqtt' }),
        intervalMs: REVOCATION_CHECK_MS,
      })
      cleanups.push(() => revokedHubs.stop())
    }
    // An ephemeral broker port (tests): hubs are told the port actually bound.
    config = { ...config, mqttPort: broker.port }
    const bus = metrics ? countedHubBus(broker.bus, metrics) : broker.bus
    const rollout = new ReleaseRollout({
      storage,
      bus,
      catalog: new ReleaseCatalog(path.join(config.dataDir, 'releases'), storage.servedCatalogs),
      logger: logger.child({ name: 'releases' }),
    })
    // Every hub message, of its presence, its state or its jobs, is handled through one queue.
    const hubMessages = new HandlerRetry(logger.child({ name: 'dispatch' }))
    if (metrics)
      registerStateGauges(metrics, {
        storage,
        brokerReady: () => broker.ready(),
        ...(broker.clients && { brokerClients: broker.clients }),
        hubMessagesInProgress: () => hubMessages.inProgress,
      })
    let webhookDeliveries: DeliveryWorker | undefined
    const dispatcher = new Dispatcher({
      storage,
      bus,
      logger: logger.child({ name: 'dispatch' }),
      publicUrl: config.publicUrl,
      pendingExpirySeconds: config.pendingJobExpirySeconds,
      cancelConfirmTimeoutMs: config.cancelConfirmTimeoutMs,
      handlers: hubMessages,
      // The worker starts below; a job's events are looked for as soon as they are written.
      jobChanged: () => webhookDeliveries?.jobChanged(),
    })
    const presence = new HubPresence({
      storage,
      bus,
      logger: logger.child({ name: 'presence' }),
      handlers: hubMessages,
      willRecheckMs: config.willRecheckMs,
      hubOnline: (agentId) => dispatcher.hubOnline(agentId),
    })
    const hubStates = new HubStateReports({
      storage,
      bus,
      handlers: hubMessages,
      onState: (agentId, state, stored) => rollout.stateReported(agentId, state, stored),
    })
    if (config.mqttUrl)
      announcer = new AnnounceAfterReconnect({
        hubPresence: storage.hubPresence,
        bus,
        logger: logger.child({ name: 'presence' }),
        handled: () => hubMessages.settled(),
      })
    const lanChanges = watchLanChanges({
      storage,
      bus,
      logger: logger.child({ name: 'presence' }),
      intervalMs: LAN_CHANGE_CHECK_MS,
    })
    cleanups.push(() => lanChanges.stop())
    await presence.start()
    await hubStates.start()
    await dispatcher.start()
    cleanups.push(async () => {
      announcer?.stop()
      await Promise.all([presence.stop(), dispatcher.stop()])
    })
    // Stopping, a node first leaves the hubs' shared subscriptions (MQTT_URL), so that the other nodes take
    // the hubs' messages from then on, and handles every message that had already come, those waiting for a
    // turn included (stopping the dispatcher and the presence ends the running ones and starts no other).
    cleanups.push(async () => {
      if (!broker.leave) return
      announcer?.stop()
      await broker.leave()
      await hubMessages.settled()
    })
    const silentJobs = new SilentJobs({
      storage,
      bus,
      logger: logger.child({ name: 'dispatch' }),
      publicUrl: config.publicUrl,
      pendingExpirySeconds: config.pendingJobExpirySeconds,
      silentMs: config.silentJobMs,
    })
    silentJobs.start()
    cleanups.push(() => silentJobs.stop())
    const blobs = createBlobStore(config.dataDir)
    const housekeeping = new Housekeeping({
      storage,
      blobs,
      logger: logger.child({ name: 'housekeeping' }),
      intervalMs: config.housekeepingIntervalSeconds * 1000,
      documentRetentionHours: config.documentRetentionHours,
    })
    housekeeping.start()
    cleanups.push(() => housekeeping.stop())
    // Every node delivers webhooks; a delivery's lease keeps two nodes off the same one (storage/webhooks.ts).
    const deliveryWorker = new DeliveryWorker({
      webhooks: storage.webhooks,
      subjects: storedEventSubjects(storage),
      secretBox: webhookSecretBox(webhookSecretKey(config.webhookSecretKey || undefined, config.dataDir)),
      logger: logger.child({ name: 'webhooks' }),
      ...(metrics && { observer: webhookDeliveryMetrics(metrics) }),
      ...seams.webhookDelivery,
    })
    if (metrics) registerWebhookBacklogGauges(metrics, () => storage.webhooks.backlog())
    webhookDeliveries = deliveryWorker
    deliveryWorker.start()
    cleanups.push(() => deliveryWorker.stop())
    const app = await buildApp({
      webhookQueued: () => deliveryWorker.nudge(),
      config,
      storage,
      blobs,
      logger,
      jobEvents: dispatcher,
      brokerReady: () => broker.ready(),
      ...(metrics && { metrics }),
      ...(broker.provisionHub && { provisionHub: broker.provisionHub }),
    })
    cleanups.push(() => app.close())
    const metricsListener =
      metrics &&
      (await startMetricsListener({
        host: config.metricsHost,
        port: Number(config.metricsPort),
        registry: metrics,
        logger: logger.child({ name: 'metrics' }),
      }))
    if (metricsListener) cleanups.push(() => metricsListener.close())
    await app.listen({ host: config.host, port: config.port })
    const address = app.server.address()
    const port = typeof address === 'object' && address ? address.port : config.port
    const apiUrl = `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${port}`
    const reachable = reachableAddresses(config.host)
    const metricsUrl =
      metricsListener &&
      `http://${config.metricsHost.includes(':') ? `[${config.metricsHost}]` : config.metricsHost}:${metricsListener.port}/metrics`
    logger.info(
      {
        api: reachable.map((host) => `http://${host}:${port}`),
        public_url: config.publicUrl,
        openapi: `${config.publicUrl}/openapi.json`,
        mqtt: reachable.map((host) => `${tls ? 'mqtts' : 'mqtt'}://${host}:${broker.port}`),
        mqtt_public_url: config.mqttPublicUrl || `${tls ? 'mqtts' : 'mqtt'}://<host hubs use>:${broker.port}`,
        ...(metricsUrl && { metrics: metricsUrl }),
        data_dir: config.dataDir,
        database: config.databaseUrl
          ? redactedDatabaseUrl(config.databaseUrl)
          : path.join(config.dataDir, DATABASE_FILE),
      },
      'cloud ready',
    )
    return {
      app,
      storage,
      broker,
      dispatcher,
      webhookDeliveries: deliveryWorker,
      apiUrl,
      ...(metricsUrl && { metricsUrl }),
      async close() {
        await unwind()
        logger.info('cloud stopped')
      },
    }
  } catch (error) {
    await unwind()
    throw error
  }
}
