import { randomUUID } from 'node:crypto'
import type { MqttClient } from 'mqtt'
import { pino } from 'pino'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { loadConfig } from '../../../cloud/config.ts'
import { type RunningCloud, startCloud } from '../../../cloud/server.ts'
import { newWebhookSecret, webhookSecretBox, webhookSecretKey } from '../../../cloud/webhooks/secret-box.ts'
import type { HubPrinter } from '../../../protocol/hub-messages.ts'
import type { PrintJob } from '../../../protocol/print-job.ts'
import { printerIdFor } from '../../../protocol/printer-id.ts'
import { freePort } from '../../helpers/free-port.ts'
import { tempDir } from '../../helpers/temp-dir.ts'
import { postReceiptJob } from '../api/api-helpers.ts'
import { connectHub, enroll, seedAccount } from '../hub-link.ts'
import { promtoolCheck } from '../metrics/promtool.ts'
import { RECEIPT_PRINTER } from '../test-cloud.ts'
import { startWebhookReceiver, type WebhookReceiver } from './receiver.ts'

const POLL = { timeout: 10_000, interval: 20 }

const receiptPrinter: HubPrinter = {
  key: 'receipt-1',
  name: 'Receipts',
  uri: 'socket://127.0.0.1:9100?language=escpos',
  languages: ['escpos'],
  capabilities: { ...RECEIPT_PRINTER, document_formats: ['raw'] },
  health: { state: 'ready', reasons: [], checked_at: new Date().toISOString() },
}

/**
 * The whole cloud in this process (SQLite, the embedded broker, an MQTT client as the hub): a job created
 * through the API and printed by the hub reaches a real HTTPS receiver, which verifies every delivery with the
 * standardwebhooks library, as print_job.* events; the hub's and printer's presence as agent.* and printer.*.
 */
describe('webhook deliveries from a running cloud', () => {
  const dir = tempDir('cloud-webhooks-')
  const secret = newWebhookSecret()
  let receiver: WebhookReceiver
  let cloud: RunningCloud
  let seed: Awaited<ReturnType<typeof seedAccount>>
  let hub: { agent_id: string; credential: string }
  let client: MqttClient

  const publish = (topic: string, payload: object) =>
    client.publishAsync(`hubs/${hub.agent_id}/${topic}`, JSON.stringify({ v: 1, ...payload }), { qos: 1 })

  beforeAll(async () => {
    receiver = await startWebhookReceiver(() => secret)
    const port = await freePort()
    const config = loadConfig({
      DATA_DIR: dir.path,
      HOST: '127.0.0.1',
      PORT: String(port),
      MQTT_PORT: '0',
      METRICS_PORT: '0',
      PUBLIC_URL: `http://127.0.0.1:${port}`,
      LOG_LEVEL: 'silent',
    })
    cloud = await startCloud(config, pino({ level: 'silent' }), {
      webhookDelivery: { fetchSeams: receiver.fetchSeams, pollIntervalMs: 20 },
    })
    seed = await seedAccount(cloud)
    // Sealed under the key the cloud made in DATA_DIR, as the API seals a new endpoint's secret.
    const box = webhookSecretBox(webhookSecretKey(undefined, dir.path))
    const endpointId = randomUUID()
    await cloud.storage.webhooks.createEndpoint(
      seed.accountId,
      {
        endpointId,
        url: receiver.url('/print-hub'),
        eventTypes: [
          'print_job.pending',
          'print_job.reserved',
          'print_job.printing',
          'print_job.printed',
          'agent.online',
          'printer.online',
        ],
        description: null,
        sealedSecret: box.seal(secret, endpointId),
      },
      new Date().toISOString(),
    )
    hub = await enroll(cloud.apiUrl, seed.enrollmentToken)
    client = await connectHub(`mqtt://127.0.0.1:${cloud.broker.port}`, {
      clientId: hub.agent_id,
      username: hub.agent_id,
      password: hub.credential,
    })
    // The hub takes every job it is offered and prints it.
    client.on('message', (_topic, payload) => {
      const { print_job_id } = JSON.parse(payload.toString()) as { print_job_id: string }
      const at = () => new Date().toISOString()
      void (async () => {
        await publish('job-ack', { print_job_id, at: at() })
        await publish('job-status', { print_job_id, status: 'printing', at: at() })
        await publish('job-status', { print_job_id, status: 'printed', at: at() })
      })()
    })
    await client.subscribeAsync(`hubs/${hub.agent_id}/job-offer`, { qos: 1 })
    await publish('presence', { online: true, session: 's1' })
    await publish('state', {
      agent_version: '9.9.9',
      host: { hostname: 'pi', platform: 'linux', arch: 'arm64' },
      printers: [receiptPrinter],
    })
  })
  afterAll(async () => {
    client?.end(true)
    await cloud?.close()
    await receiver?.close()
    dir.remove()
  })

  it('delivers the hub and printer coming online, then each status of a job printed through the API', async () => {
    const printerId = printerIdFor(hub.agent_id, 'receipt-1')
    await vi.waitFor(() => {
      const types = receiver.received.map((r) => r.event.type)
      expect(types).toContain('agent.online')
      expect(types).toContain('printer.online')
    }, POLL)
    expect(receiver.received.find((r) => r.event.type === 'agent.online')?.event.data).toMatchObject({
      agent_id: hub.agent_id,
      online: true,
    })
    expect(receiver.received.find((r) => r.event.type === 'printer.online')?.event.data).toMatchObject({
      printer_id: printerId,
      online: true,
    })

    const job = await postReceiptJob(cloud.apiUrl, seed.token, printerId)
    const ofJob = () =>
      receiver.received.filter((r) => (r.event.data as PrintJob).print_job_id === job.print_job_id)
    await vi.waitFor(() => expect(ofJob()).toHaveLength(4), POLL)
    const statuses = new Map(ofJob().map((r) => [r.event.type, (r.event.data as PrintJob).status]))
    expect(Object.fromEntries(statuses)).toEqual({
      'print_job.pending': 'pending',
      'print_job.reserved': 'reserved',
      'print_job.printing': 'printing',
      'print_job.printed': 'printed',
    })
    expect(receiver.refused).toBe(0)
    expect(new Set(receiver.received.map((r) => r.event.id)).size).toBe(receiver.received.length)
  })

  it('counts the attempts and their lag on /metrics, which promtool accepts', async () => {
    const text = await (await fetch(cloud.metricsUrl ?? '')).text()
    expect(text).toContain(
      `\nprint_hub_webhook_delivery_attempts_total{outcome="delivered"} ${receiver.received.length}\n`,
    )
    expect(text).toContain('\nprint_hub_webhook_delivery_attempts_total{outcome="retrying"} 0\n')
    expect(text).toContain(`\nprint_hub_webhook_delivery_lag_seconds_count ${receiver.received.length}\n`)
    expect(text).toContain('\nprint_hub_webhook_deliveries_pending 0\n')
    expect(text).toContain('\nprint_hub_webhook_delivery_oldest_due_seconds 0\n')
    const { code, output } = await promtoolCheck(text)
    expect(output).toBe('')
    expect(code).toBe(0)
  })
})
