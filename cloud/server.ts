import path from 'node:path'
import type { FastifyInstance } from 'fastify'
import { type Logger, pino } from 'pino'
import { buildApp } from './app.ts'
import { type EmbeddedBroker, startBroker } from './broker/broker.ts'
import type { CloudConfig } from './config.ts'
import { createBlobStore } from './storage/blob-store.ts'
import { DATABASE_FILE, openStorage } from './storage/storage.ts'

export interface RunningCloud {
  app: FastifyInstance
  broker: EmbeddedBroker
  apiUrl: string
  /** Stops taking requests, lets in-flight ones finish, then closes the broker and the database. */
  close(): Promise<void>
}

export function createLogger(config: Pick<CloudConfig, 'logLevel'>): Logger {
  return pino({
    level: config.logLevel,
    redact: ['req.headers.authorization', 'req.headers.cookie', 'client_secret', 'access_token', 'token'],
  })
}

export async function startCloud(
  config: CloudConfig,
  logger: Logger = createLogger(config),
): Promise<RunningCloud> {
  const storage = openStorage(config.dataDir)
  const app = await buildApp({
    config,
    storage,
    blobs: createBlobStore(config.dataDir),
    logger,
  })
  let broker: EmbeddedBroker | undefined
  try {
    await app.listen({ host: config.host, port: config.port })
    broker = await startBroker({
      host: config.host,
      port: config.mqttPort,
      logger: logger.child({ name: 'mqtt' }),
    })
  } catch (error) {
    await app.close()
    storage.close()
    throw error
  }
  const address = app.server.address()
  const port = typeof address === 'object' && address ? address.port : config.port
  const apiUrl = `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${port}`
  logger.info(
    {
      api: apiUrl,
      public_url: config.publicUrl,
      openapi: `${config.publicUrl}/openapi.json`,
      mqtt: `mqtt://${config.host}:${broker.port}`,
      data_dir: config.dataDir,
      database: path.join(config.dataDir, DATABASE_FILE),
    },
    'cloud ready',
  )
  const running = broker
  return {
    app,
    broker: running,
    apiUrl,
    async close() {
      await app.close()
      await running.close()
      storage.close()
      logger.info('cloud stopped')
    },
  }
}
