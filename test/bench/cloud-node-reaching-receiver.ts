import { loadConfig } from '../../cloud/config.ts'
import { createLogger } from '../../cloud/logging.ts'
import { startCloud } from '../../cloud/server.ts'
import { type ReceiverReach, receiverSeams } from '../cloud/webhooks/receiver.ts'

/**
 * `cloud serve` for a benchmark whose webhook receiver listens on 127.0.0.1: the same cloud, configured from
 * the environment, with the delivery worker's fetcher reaching the receiver (receiverSeams: its name resolves
 * to a public address, connected to on loopback), which the SSRF guard would otherwise refuse.
 * BENCH_WEBHOOK_REACH: JSON ReceiverReach. Stops on SIGTERM, as `cloud serve` does.
 */
const reach = JSON.parse(process.env.BENCH_WEBHOOK_REACH ?? '{}') as ReceiverReach
const config = loadConfig()
const logger = createLogger(config)
const cloud = await startCloud(config, logger, { webhookDelivery: { fetchSeams: receiverSeams(reach) } })
process.once('SIGTERM', () => {
  cloud.close().then(
    () => process.exit(0),
    () => process.exit(1),
  )
})
