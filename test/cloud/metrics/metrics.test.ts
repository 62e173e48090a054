import type { MqttClient } from 'mqtt'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import type { HubPrinter } from '../../../protocol/hub-messages.ts'
import type { PrintJob } from '../../../protocol/print-job.ts'
import { printerIdFor } from '../../../protocol/printer-id.ts'
import { connectHub, enroll, seedAccount, startFullCloud } from '../hub-link.ts'
import { ESCPOS_RECEIPT, RECEIPT_PRINTER } from '../test-cloud.ts'
import { promtoolCheck } from './promtool.ts'

type FullCloud = Awaited<ReturnType<typeof startFullCloud>>

const POLL = { timeout: 10_000, interval: 10 }

const printer = (key: string): HubPrinter => ({
  key,
  name: `Printer ${key}`,
  uri: `socket://127.0.0.1:9100?language=escpos&k=${key}`,
  languages: ['escpos'],
  capabilities: { ...RECEIPT_PRINTER, document_formats: ['raw'] },
  health: { state: 'ready', reasons: [], checked_at: new Date().toISOString() },
})

/** The value of one series of an exposition text (`name{labels}` exactly as written), undefined if absent. */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `))
  return line === undefined ? undefined : Number(line.slice(series.length + 1))
}

describe('GET /metrics on the metrics listener, with an MQTT client standing in for a hub', () => {
  let full: FullCloud
  let seed: Awaited<ReturnType<typeof seedAccount>>
  let hub: { agent_id: string; credential: string }
  let client: MqttClient
  let metricsUrl: string
  const printerId = () => printerIdFor(hub.agent_id, 'receipt-1')

  const api = async <T>(method: string, path: string, body?: unknown) => {
    const res = await fetch(`${full.url}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${seed.token}`,
        ...(body !== undefined && { 'content-type': 'application/json' }),
      },
      ...(body !== undefined && { body: JSON.stringify(body) }),
    })
    return { status: res.status, body: (await res.json()) as T }
  }
  const createJob = async () =>
    (
      await api<PrintJob>('POST', '/api/v1/print-jobs/from-base64', {
        printer_id: printerId(),
        document_base64: ESCPOS_RECEIPT.toString('base64'),
        document_format: 'raw',
        document_raw_language: 'escpos',
      })
    ).body
  const publish = (topic: string, payload: object) =>
    client.publishAsync(`hubs/${hub.agent_id}/${topic}`, JSON.stringify({ v: 1, ...payload }), { qos: 1 })
  const report = (printJobId: string, status: string, extra: object = {}) =>
    publish('job-status', { print_job_id: printJobId, status, at: new Date().toISOString(), ...extra })
  const statusOf = async (id: string) =>
    (await full.cloud.storage.printJobs.findById(seed.accountId, id))?.status
  const scrape = async () => {
    const res = await fetch(metricsUrl)
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/)
    return res.text()
  }

  beforeAll(async () => {
    full = await startFullCloud({ METRICS_PORT: '0' })
    metricsUrl = full.cloud.metricsUrl ?? ''
    seed = await seedAccount(full.cloud)
    hub = await enroll(full.url, seed.enrollmentToken)
    client = await connectHub(full.mqttUrl, {
      clientId: hub.agent_id,
      username: hub.agent_id,
      password: hub.credential,
    })
    client.on('message', (topic, payload) => {
      const message = JSON.parse(payload.toString())
      // The hub drops a job it is asked to cancel.
      if (topic.endsWith('/command') && message.command === 'cancel_job')
        void report(message.print_job_id, 'cancelled')
    })
    await client.subscribeAsync([`hubs/${hub.agent_id}/job-offer`, `hubs/${hub.agent_id}/command`], {
      qos: 1,
    })
    await publish('presence', { online: true, session: 's1' })
    await publish('state', {
      agent_version: '9.9.9',
      host: { hostname: 'pi', platform: 'linux', arch: 'arm64' },
      printers: [printer('receipt-1'), printer('receipt-2')],
    })
    await vi.waitFor(async () => {
      if (!(await full.cloud.storage.printers.locate(printerId())))
        throw new Error('printer not registered yet')
    }, POLL)
  })
  afterAll(async () => {
    client?.end(true)
    await full?.close()
  })

  it('listens on the loopback address only, apart from the API, whose port has no /metrics', async () => {
    expect(metricsUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/)
    expect(new URL(metricsUrl).port).not.toBe(new URL(full.url).port)
    expect((await fetch(`${full.url}/metrics`)).status).toBe(404)
    expect((await fetch(new URL('/other', metricsUrl))).status).toBe(404)
  })

  it('counts jobs created and finished by outcome, the time to printed, and reads the queues and the fleet', async () => {
    const printed = await createJob()
    const failed = await createJob()
    const cancelled = await createJob()
    const waiting = await createJob()
    await report(printed.print_job_id, 'printing')
    await report(printed.print_job_id, 'printed')
    await report(failed.print_job_id, 'failed', { failure_reason: 'printer_paper_out' })
    expect((await api('POST', `/api/v1/print-jobs/${cancelled.print_job_id}/cancel`)).status).toBe(200)
    await expect.poll(() => statusOf(printed.print_job_id), POLL).toBe('printed')
    await expect.poll(() => statusOf(failed.print_job_id), POLL).toBe('failed')
    await expect.poll(() => statusOf(cancelled.print_job_id), POLL).toBe('cancelled')
    expect(await statusOf(waiting.print_job_id)).toBe('pending')

    const text = await scrape()
    expect(text).toContain('\nprint_hub_print_jobs_created_total 4\n')
    expect(text).toContain('\nprint_hub_print_jobs_finished_total{outcome="printed",reason=""} 1\n')
    expect(text).toContain(
      '\nprint_hub_print_jobs_finished_total{outcome="failed",reason="printer_paper_out"} 1\n',
    )
    expect(text).toContain('\nprint_hub_print_jobs_finished_total{outcome="cancelled",reason=""} 1\n')
    expect(text).toContain('\nprint_hub_print_job_time_to_printed_seconds_count 1\n')
    expect(text).toContain('\nprint_hub_print_jobs_unfinished{status="pending"} 1\n')
    expect(text).toContain('\nprint_hub_print_jobs_unfinished{status="reserved"} 0\n')
    expect(text).toContain('\nprint_hub_print_jobs_unfinished{status="printing"} 0\n')
    expect(text).toContain('\nprint_hub_hubs_online 1\n')
    expect(text).toContain('\nprint_hub_printers_online 2\n')
    expect(text).toContain('\nprint_hub_mqtt_broker_ready 1\n')
    expect(text).toContain('\nprint_hub_mqtt_clients_connected 1\n')
    expect(text).toContain('\nprint_hub_hub_messages_in_progress 0\n')
    // printing, printed, failed and the hub's cancelled.
    expect(text).toContain('\nprint_hub_mqtt_messages_received_total{topic="job-status"} 4\n')
    expect(text).toContain('\nprint_hub_mqtt_messages_received_total{topic="state"} 1\n')
    // Each job is offered once as it is created (the silent-job pass may offer one again on a slow machine).
    expect(sample(text, 'print_hub_mqtt_messages_published_total{topic="job-offer"}')).toBeGreaterThanOrEqual(
      4,
    )
    expect(sample(text, 'print_hub_mqtt_messages_published_total{topic="command"}')).toBeGreaterThanOrEqual(1)
    expect(text).toContain(
      '\nprint_hub_http_request_duration_seconds_count{method="POST",route="/api/v1/print-jobs/from-base64",status_code="201"} 4\n',
    )
    expect(text).toContain(
      '\nprint_hub_http_request_duration_seconds_count{method="POST",route="/api/v1/print-jobs/:printJobId/cancel",status_code="200"} 1\n',
    )
    // The probe of /metrics on the public port: a 404 of no route, never the path asked for.
    expect(text).toContain(
      '\nprint_hub_http_request_duration_seconds_count{method="GET",route="unmatched",status_code="404"} 1\n',
    )
    expect(text).not.toContain(printed.print_job_id)
    expect(text).toMatch(/\nnodejs_eventloop_lag_seconds \d/)
    expect(text).toMatch(/\nprocess_resident_memory_bytes \d/)
    // SQLite: one connection, no pool.
    expect(text).not.toContain('print_hub_database_pool')
  })

  it('passes promtool check metrics', async () => {
    const { code, output } = await promtoolCheck(await scrape())
    expect(output).toBe('')
    expect(code).toBe(0)
  })
})
