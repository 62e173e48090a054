import { randomUUID } from 'node:crypto'
import { writeFileSync } from 'node:fs'
import path from 'node:path'
import type { MqttClient } from 'mqtt'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { hubTopic, PROTOCOL_VERSION } from '../../../protocol/hub-messages.ts'
import type { PrintJob } from '../../../protocol/print-job.ts'
import { printerIdFor } from '../../../protocol/printer-id.ts'
import { testDatabases } from '../../helpers/postgres-server.ts'
import { tempDir } from '../../helpers/temp-dir.ts'
import { postReceiptJob } from '../api/api-helpers.ts'
import { type CloudMosquitto, startCloudMosquitto } from '../broker/mosquitto-peer.ts'
import { connectHub, enroll, seedAccount, startFullCloud } from '../hub-link.ts'
import { RECEIPT_PRINTER } from '../test-cloud.ts'
import { promtoolCheck } from './promtool.ts'

type FullCloud = Awaited<ReturnType<typeof startFullCloud>>

const POLL = { timeout: 10_000, interval: 20 }

/** The value of one series of an exposition text (`name{labels}` as written); 0 when absent. */
function sample(text: string, series: string): number {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `))
  return line === undefined ? 0 : Number(line.slice(series.length + 1))
}

/**
 * Two nodes on PostgreSQL and Mosquitto (MQTT_URL): each counts what it did, so the sums over the nodes are the
 * fleet's figures, while the gauges read from the database are the fleet's on each node.
 */
describe('metrics of several nodes', { timeout: 60_000 }, () => {
  const scratch = tempDir('metrics-nodes-')
  const databases = testDatabases()
  let mosquitto: CloudMosquitto
  const nodes: FullCloud[] = []
  let hub: MqttClient | undefined

  beforeAll(async () => {
    mosquitto = await startCloudMosquitto()
    const passwordFile = path.join(scratch.path, 'cloud-password')
    writeFileSync(passwordFile, mosquitto.adminPassword, { mode: 0o600 })
    const databaseUrl = await databases.migrated()
    for (const name of ['a', 'b'])
      nodes.push(
        await startFullCloud({
          DATABASE_URL: databaseUrl,
          MQTT_URL: mosquitto.server.url,
          MQTT_ADMIN_PASSWORD_FILE: passwordFile,
          MQTT_CLIENT_ID: `cloud-metrics-${name}-${randomUUID()}`,
          METRICS_PORT: '0',
        }),
      )
  }, 60_000)

  afterAll(async () => {
    hub?.end(true)
    for (const node of nodes) await node.close()
    await mosquitto?.server.stop()
    scratch.remove()
  })

  it('counts per node, sums to the fleet’s figures, and passes promtool on each node', async () => {
    const [a] = nodes as [FullCloud, FullCloud]
    const seeded = await seedAccount(a.cloud)
    const { agent_id: agentId, credential } = await enroll(a.url, seeded.enrollmentToken)
    hub = await connectHub(mosquitto.server.url, {
      clientId: agentId,
      username: agentId,
      password: credential,
    })
    const publish = (topic: 'presence' | 'state' | 'job-status', payload: object) =>
      hub!.publishAsync(hubTopic(agentId, topic), JSON.stringify({ v: PROTOCOL_VERSION, ...payload }), {
        qos: 1,
      })
    await publish('presence', { online: true, session: randomUUID() })
    await publish('state', {
      agent_version: '9.9.9',
      host: { hostname: 'pi', platform: 'linux', arch: 'arm64' },
      printers: [
        {
          key: 'receipt-1',
          name: 'Receipts',
          uri: 'socket://127.0.0.1:9100?language=escpos',
          languages: ['escpos'],
          capabilities: { ...RECEIPT_PRINTER, document_formats: ['raw'] },
          health: { state: 'ready', reasons: [], checked_at: new Date().toISOString() },
        },
      ],
    })
    const printerId = printerIdFor(agentId, 'receipt-1')
    await expect
      .poll(async () => (await a.cloud.storage.printers.findById(seeded.accountId, printerId))?.online, POLL)
      .toBe(true)
    const jobs: PrintJob[] = []
    for (let i = 0; i < 2; i++) jobs.push(await postReceiptJob(a.url, seeded.token, printerId))
    for (const job of jobs)
      await publish('job-status', {
        print_job_id: job.print_job_id,
        status: 'printed',
        at: new Date().toISOString(),
      })
    for (const job of jobs)
      await expect
        .poll(
          async () => (await a.cloud.storage.printJobs.findById(seeded.accountId, job.print_job_id))?.status,
          POLL,
        )
        .toBe('printed')

    const texts = await Promise.all(
      nodes.map(async (node) => (await fetch(node.cloud.metricsUrl ?? '')).text()),
    )
    const total = (series: string) => texts.reduce((sum, text) => sum + sample(text, series), 0)
    expect(total('print_hub_print_jobs_created_total')).toBe(2)
    expect(total('print_hub_print_jobs_finished_total{outcome="printed",reason=""}')).toBe(2)
    expect(total('print_hub_mqtt_messages_received_total{topic="job-status"}')).toBe(2)
    expect(total('print_hub_mqtt_messages_received_total{topic="state"}')).toBe(1)
    for (const text of texts) {
      expect(text).toContain('\nprint_hub_hubs_online 1\n')
      expect(text).toContain('\nprint_hub_printers_online 1\n')
      expect(text).toContain('\nprint_hub_mqtt_broker_ready 1\n')
      // Mosquitto counts its own clients.
      expect(text).not.toContain('print_hub_mqtt_clients_connected')
      expect(text).toMatch(/\nprint_hub_database_pool_connections\{state="idle"\} \d+\n/)
      expect(text).toMatch(/\nprint_hub_database_pool_waiting_queries \d+\n/)
      expect(await promtoolCheck(text)).toEqual({ code: 0, output: '' })
    }
  })
})
