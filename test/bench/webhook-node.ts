import { pino } from 'pino'
import { openStorage, type StorageSettings } from '../../cloud/storage/storage.ts'
import { DeliveryWorker } from '../../cloud/webhooks/delivery-worker.ts'
import { storedEventSubjects } from '../../cloud/webhooks/event-payload.ts'
import { webhookSecretBox } from '../../cloud/webhooks/secret-box.ts'
import { type ReceiverReach, receiverSeams } from '../cloud/webhooks/receiver.ts'

/**
 * One cloud node's webhook deliveries in a process of its own, for test/bench/webhook-delivery.ts: storage on
 * the bench's database and a DeliveryWorker with the cloud's defaults, reaching the bench's receiver. argv[2]:
 * JSON `{settings, key, reach}` (key: the secret box's key, base64). Prints `ready` once working; stops its
 * worker and exits 0 on SIGTERM.
 */
const { settings, key, reach } = JSON.parse(process.argv[2] ?? '{}') as {
  settings: StorageSettings
  key: string
  reach: ReceiverReach
}
const storage = await openStorage(settings)
const worker = new DeliveryWorker({
  webhooks: storage.webhooks,
  subjects: storedEventSubjects(storage),
  secretBox: webhookSecretBox(Buffer.from(key, 'base64')),
  logger: pino({ level: 'silent' }),
  fetchSeams: receiverSeams(reach),
})
worker.start()
// The worker's timers do not hold a process open (a cloud node is held by its servers): this one is held
// until SIGTERM.
const held = setInterval(() => {}, 60_000)
process.stdout.write('ready\n')
process.once('SIGTERM', () => {
  clearInterval(held)
  void worker
    .stop()
    .then(() => storage.close())
    .then(() => process.exit(0))
})
