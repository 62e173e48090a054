import multipart from '@fastify/multipart'
import Fastify, { type FastifyBaseLogger, type FastifyInstance, LogController } from 'fastify'
import type { Registry } from 'prom-client'
import { ApiError } from '../print-api/api-error.ts'
import { createPdfInspector, type PdfInspector } from '../print-api/documents/pdf-inspection.ts'
import { errorHandlerPlugin, sendError, toApiError } from '../print-api/error-handler.ts'
import { requestIdFor, requestIdPlugin } from '../print-api/request-id.ts'
import { createValidatorCompiler } from '../print-api/validation.ts'
import { accessTokenSigningKey } from './auth/access-token-key.ts'
import { accessTokenSigner } from './auth/access-token-signer.ts'
import type { CloudConfig } from './config.ts'
import { type ConsoleClock, SYSTEM_CLOCK } from './console/console-context.ts'
import { consolePlugin } from './console/console-plugin.ts'
import { createDocumentIntake } from './documents/intake.ts'
import type { SafeFetchOptions } from './fetch/safe-fetch.ts'
import { httpMetricsPlugin } from './metrics/http-metrics.ts'
import { authenticationPlugin } from './plugins/authentication.ts'
import { bodyBudgetPlugin } from './plugins/body-budget.ts'
import { idempotencyPlugin } from './plugins/idempotency.ts'
import { openapiPlugin } from './plugins/openapi.ts'
import { connectQuotaStore, rateLimitPlugin } from './plugins/rate-limit.ts'
import type { JobEvents } from './print-jobs/job-events.ts'
import { createPrintJobSubmitter } from './print-jobs/submit.ts'
import { agentApiRoutes } from './routes/agent-api.ts'
import { agentDownloadRoutes } from './routes/agent-downloads.ts'
import { agentLanCredentialRoutes } from './routes/agent-lan-credentials.ts'
import { developerApiRoutes } from './routes/developer-api.ts'
import { documentRoutes } from './routes/documents.ts'
import { healthRoutes } from './routes/health.ts'
import { oauthTokenRoutes } from './routes/oauth-token.ts'
import { onboardingRoutes } from './routes/onboarding.ts'
import { pairingRoutes } from './routes/pairing.ts'
import { partnerAccountRoutes } from './routes/partner-accounts.ts'
import { partnerAgentRoutes } from './routes/partner-agents.ts'
import { partnerEnrollmentRoutes } from './routes/partner-enrollments.ts'
import { printJobRoutes } from './routes/print-jobs.ts'
import { resourceListRoutes } from './routes/resource-lists.ts'
import { tokenKeyRoutes } from './routes/token-keys.ts'
import { webhookEndpointRoutes } from './routes/webhook-endpoints.ts'
import type { BlobStore } from './storage/blob-store.ts'
import type { Storage } from './storage/storage.ts'
import { webhookEndpointAdmin } from './webhooks/manage-endpoints.ts'
import { type WebhookSecretBox, webhookSecretBox, webhookSecretKey } from './webhooks/secret-box.ts'

export interface AppDependencies {
  config: CloudConfig
  storage: Storage
  blobs: BlobStore
  /** Built from the configuration unless given (tests pass one with a broken Ghostscript path). */
  pdfInspector?: PdfInspector
  /** Seams for tests (resolver, connector, CA); the address checks of the URL fetcher always run. */
  fetchSeams?: Pick<SafeFetchOptions, 'resolve' | 'connect' | 'tlsCa' | 'dnsServers'>
  /** Told of created and cancelled jobs (the dispatcher); nothing by default. */
  jobEvents?: JobEvents
  /** A pino logger; none in tests. */
  logger?: FastifyBaseLogger
  /** Whether the MQTT broker listens, for GET /readyz; an app built without one reports its database only. */
  brokerReady?: () => boolean
  /** External broker (MQTT_URL): gives a hub its broker client when it presents its credential. */
  provisionHub?: (agentId: string, credential: string) => Promise<void>
  /** The console's clock (session expiry, sign-in throttling); the system's by default. */
  consoleClock?: ConsoleClock
  /** Where every request's latency is recorded (METRICS_PORT); none by default. */
  metrics?: Registry
  /** Seals webhook signing secrets; by default under WEBHOOK_SECRET_KEY, or the key file in DATA_DIR. */
  webhookSecrets?: WebhookSecretBox
  /** Told when a webhook delivery was queued due now (the node's delivery worker looks at once). */
  webhookQueued?: () => void
}

const NO_JOB_EVENTS: JobEvents = {
  offersNewJobs: false,
  jobCreated: async () => {},
  cancelRequested: async () => {},
}

/** Builds the cloud's HTTP API. The server file listens; tests call this and `inject` or listen on port 0. */
export async function buildApp(deps: AppDependencies): Promise<FastifyInstance> {
  const { config, storage, blobs } = deps
  const pdfInspector =
    deps.pdfInspector ??
    createPdfInspector({
      timeoutMs: config.inspectionTimeoutMs,
      maxConcurrent: config.inspectionMaxConcurrent,
      maxQueued: config.inspectionMaxQueued,
      maxQueuedPerAccount: config.inspectionMaxQueuedPerAccount,
    })
  const app = Fastify({
    ...(deps.logger ? { loggerInstance: deps.logger } : { logger: false }),
    genReqId: requestIdFor,
    requestIdHeader: false,
    logController: new LogController({ requestIdLogLabel: 'request_id' }),
    // Ids are uuids; a longer path segment must still reach the schema and get its 422, not a router 414.
    routerOptions: { maxParamLength: 1000 },
    bodyLimit: 1024 * 1024,
    // Requests that arrive while the server closes get the spec's error body (hook below), not Fastify's.
    return503OnClosing: false,
    // A hop count is valid at run time (Fastify docs: trustProxy) though its types omit numbers.
    trustProxy: config.trustProxy as boolean | string,
    // Errors Fastify meets before routing (a path with bad percent-encoding, ...) skip the hooks: answer them
    // here with the same body and X-Request-Id.
    frameworkErrors: (error, request, reply) => {
      reply.header('x-request-id', request.id)
      return sendError(reply, toApiError(error, request))
    },
  })
  app.setValidatorCompiler(createValidatorCompiler())
  app.addHook('onClose', async () => pdfInspector.close())
  let closing = false
  app.addHook('preClose', async () => {
    closing = true
  })
  app.addHook('onRequest', async (_request, reply) => {
    if (!closing) return
    reply.header('connection', 'close')
    throw new ApiError('shutting_down', 'The service is restarting; retry shortly.', undefined, {
      'retry-after': '1',
    })
  })
  // Once an answer that was in flight when closing began is sent, its connection is closed if it is idle: a
  // keep-alive client that sends nothing more would otherwise hold the shutdown for its whole keep-alive
  // timeout. A request already waiting on it is answered first (the 503 above).
  app.addHook('onResponse', async () => {
    if (closing) setImmediate(() => app.server.closeIdleConnections())
  })
  // JSON endpoints take JSON only: a text/plain body is a 400 unsupported_content_type, not a string that fails
  // validation.
  app.removeContentTypeParser('text/plain')

  await app.register(requestIdPlugin)
  if (deps.metrics) await app.register(httpMetricsPlugin, { registry: deps.metrics })
  await app.register(errorHandlerPlugin)
  // With REDIS_URL the quotas are counted in Redis, shared by every cloud node (plugins/rate-limit.ts).
  const quotaStore = config.redisUrl ? await connectQuotaStore(config.redisUrl, app.log) : undefined
  if (quotaStore) app.addHook('onClose', () => quotaStore.close())
  await app.register(rateLimitPlugin, {
    store: quotaStore,
    quotas: {
      windowSeconds: config.rateLimitWindowSeconds,
      perIp: config.rateLimitPerIp,
      perAccount: config.rateLimitPerAccount,
      perHub: config.rateLimitPerHub,
      perApplication: config.rateLimitPerApplication,
      perInstallation: config.rateLimitPerInstallation,
      tokenFailureWindowSeconds: config.tokenFailureWindowSeconds,
      tokenFailuresPerIp: config.tokenFailuresPerIp,
      tokenFailuresPerClient: config.tokenFailuresPerClient,
    },
  })
  await app.register(authenticationPlugin, { storage, publicUrl: config.publicUrl })
  await app.register(bodyBudgetPlugin, {
    maxBytesInFlight: config.maxBodyBytesInFlight,
    multipartReserveBytes: config.maxDocumentBytes,
  })
  await app.register(idempotencyPlugin, { storage, ttlHours: config.idempotencyTtlHours })
  await app.register(openapiPlugin, { publicUrl: config.publicUrl })
  await app.register(multipart)

  const intake = createDocumentIntake({
    storage,
    blobs,
    pdfInspector,
    maxDocumentBytes: config.maxDocumentBytes,
    storageQuotaBytes: config.accountStorageQuotaBytes,
  })
  const jobEvents = deps.jobEvents ?? NO_JOB_EVENTS
  const submitter = createPrintJobSubmitter(storage, config.printQueueCapacity, jobEvents)
  const fetchOptions: SafeFetchOptions = {
    maxBytes: config.maxDocumentBytes,
    connectTimeoutMs: config.fetchConnectTimeoutMs,
    totalTimeoutMs: config.fetchTotalTimeoutMs,
    maxRedirects: config.fetchMaxRedirects,
    dnsTimeoutMs: config.dnsTimeoutMs,
    dnsTries: config.dnsTries,
    ...deps.fetchSeams,
  }

  await app.register(agentDownloadRoutes, {
    releasesDir: `${config.dataDir}/releases`,
    servedCatalogs: storage.servedCatalogs,
  })
  await app.register(healthRoutes, {
    checks: { database: () => storage.ping(), ...(deps.brokerReady && { broker: deps.brokerReady }) },
    ...(quotaStore && { degraded: { redis: () => quotaStore.reachable() } }),
  })
  const accessTokens = await accessTokenSigner(
    accessTokenSigningKey(config.accessTokenSigningKey || undefined, config.dataDir),
    config.publicUrl,
  )
  const accessTokenTtlSeconds = config.accessTokenTtlSeconds
  await app.register(oauthTokenRoutes, { storage, accessTokenTtlSeconds, accessTokens })
  await app.register(tokenKeyRoutes, { accessTokens })
  await app.register(resourceListRoutes, { storage })
  await app.register(developerApiRoutes, { storage, accessTokenTtlSeconds: config.accessTokenTtlSeconds })
  const partner = { storage, publicUrl: config.publicUrl, enrollmentTtlHours: config.enrollmentTtlHours }
  await app.register(partnerAccountRoutes, partner)
  await app.register(partnerEnrollmentRoutes, partner)
  await app.register(partnerAgentRoutes, partner)
  await app.register(documentRoutes, { intake, maxDocumentBytes: config.maxDocumentBytes })
  const agentApi = {
    storage,
    blobs,
    mqttPublicUrl: config.mqttPublicUrl,
    mqttScheme: config.mqttTlsCertFile ? ('mqtts' as const) : ('mqtt' as const),
    mqttPort: config.mqttPort,
    keepaliveSeconds: config.hubKeepaliveSeconds,
    ...(deps.provisionHub && { provisionHub: deps.provisionHub }),
  }
  await app.register(agentApiRoutes, agentApi)
  await app.register(agentLanCredentialRoutes, { storage, accessTokens, accessTokenTtlSeconds })
  await app.register(pairingRoutes, agentApi)
  await app.register(onboardingRoutes, { storage })
  const webhookSecrets =
    deps.webhookSecrets ??
    webhookSecretBox(webhookSecretKey(config.webhookSecretKey || undefined, config.dataDir))
  const webhooks = webhookEndpointAdmin({
    webhooks: storage.webhooks,
    secrets: webhookSecrets,
    ...(deps.webhookQueued && { queued: deps.webhookQueued }),
  })
  await app.register(webhookEndpointRoutes, { admin: webhooks })
  await app.register(printJobRoutes, {
    jobEvents,
    storage,
    intake,
    submitter,
    fetchOptions,
    maxDocumentBytes: config.maxDocumentBytes,
  })
  await app.register(consolePlugin, {
    prefix: '/console',
    storage,
    config,
    submitter,
    jobEvents,
    intake,
    webhooks,
    clock: deps.consoleClock ?? SYSTEM_CLOCK,
  })
  return app
}
