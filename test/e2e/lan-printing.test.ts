import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { type Printed, type PrintFailed, Till } from '../../docs/examples/till-fallback.ts'
import type { PrintJob } from '../../protocol/print-job.ts'
import { freePort } from '../helpers/free-port.ts'
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy.ts'
import { type PrinterSimulator, startPrinterSimulator } from '../simulators/printer-simulator.ts'
import { ApiClient } from './api-client.ts'
import {
  type CloudProcess,
  type HubProcess,
  setUpAccount,
  startCloudProcess,
  startHubProcess,
  stopAll,
} from './harness.ts'

const POLL = { timeout: 30_000, interval: 50 }

interface LanEndpoint {
  urls: string[]
  cert_sha256: string
  spki_sha256: string
}

/**
 * Issue 30: printing goes on when the shop's internet is down. A cloud and a hub (each a process), the hub
 * reaching the cloud only through two TCP relays (its API and its broker) that the test cuts and restores; a
 * till (docs/examples/till-fallback.ts) prints through the cloud, or through the hub's LAN API when the cloud
 * does not answer, with one Idempotency-Key per receipt. At every point of a job's life where the link can
 * break, the printer gets the receipt once, and the cloud's view ends as the hub's.
 */
describe('printing through the hub’s LAN while the link to the cloud is cut', { timeout: 120_000 }, () => {
  let cloud: CloudProcess
  let api: ProxyPair
  let hub: HubProcess
  let printer: PrinterSimulator
  let backend: ApiClient
  let till: Till
  let printerId: string
  let endpoint: LanEndpoint
  let lanPort: number

  interface ProxyPair {
    http: TcpProxy
    mqtt: TcpProxy
  }
  const cut = () => {
    for (const proxy of [api.http, api.mqtt]) {
      proxy.setDown(true)
      proxy.cutAll()
    }
  }
  const restore = () => {
    for (const proxy of [api.http, api.mqtt]) proxy.setDown(false)
  }
  /** The hub's view of a job through its LAN API, as the till polls it there. */
  const onHub = (job: PrintJob) => till.status({ job, via: 'hub' })
  const receipt = (text: string) => Buffer.from(`\x1b@${text}\n\x1dV\x00`, 'latin1')
  const rawJob = (bytes: Buffer) => ({
    printer_id: printerId,
    document_base64: bytes.toString('base64'),
    document_format: 'raw' as const,
    document_raw_language: 'escpos' as const,
  })
  /** How many times the printer got these bytes. */
  const copiesOf = (bytes: Buffer) =>
    printer.received().toString('latin1').split(bytes.toString('latin1')).length - 1

  beforeAll(async () => {
    const cloudPort = await freePort()
    const mqttPort = await freePort()
    api = { http: await startTcpProxy(cloudPort), mqtt: await startTcpProxy(mqttPort) }
    cloud = await startCloudProcess({
      port: cloudPort,
      mqttPort,
      env: { MQTT_PUBLIC_URL: `mqtt://127.0.0.1:${api.mqtt.port}`, PENDING_JOB_EXPIRY_SECONDS: '600' },
    })
    const account = await setUpAccount(cloud)
    backend = new ApiClient(cloud.url, account.accessToken)
    printer = await startPrinterSimulator({ language: 'escpos' })
    lanPort = await freePort()
    hub = await startHubProcess({
      cloudUrl: `http://127.0.0.1:${api.http.port}`,
      enroll: account.enrollmentToken,
      printers: [printer.uri],
      env: { HUB_LAN_PORT: String(lanPort), HUB_LAN_HOST: '127.0.0.1', HUB_LAN_ADVERTISE: '0' },
    })
    const [online] = await backend.waitForPrinters(1)
    printerId = online!.printer_id
    await cloud.admin(['hub', 'lan', 'enable', hub.agentId])
    // The cloud publishes where the hub serves, and the certificate a till pins (vi.waitFor: expect.poll is for
    // tests, not hooks).
    endpoint = await vi.waitFor(async () => {
      const agents = await backend.request<{ data: { lan_api: { endpoint: LanEndpoint | null } }[] }>(
        'GET',
        '/api/v1/agents',
      )
      const published = agents.body.data[0]?.lan_api.endpoint
      if (!published) throw new Error('the hub has not reported its LAN endpoint yet')
      return published
    }, POLL)
    expect(endpoint.urls).toContain(`https://127.0.0.1:${lanPort}/`)
    till = new Till({
      cloudUrl: cloud.url.replace(String(cloud.port), String(api.http.port)),
      hubUrl: `https://127.0.0.1:${lanPort}`,
      hubCertSha256: endpoint.cert_sha256,
      accessToken: account.accessToken,
      cloudTimeoutMs: 1500,
    })
  })
  afterAll(async () => {
    await stopAll()
    await printer?.close()
    await api?.http.close()
    await api?.mqtt.close()
  })

  it('prints through the LAN while cut off, and the cloud shows the job, by its id, once the link is back', async () => {
    cut()
    const bytes = receipt(`lunch order ${randomUUID()}`)
    const printed = await till.print(rawJob(bytes), `order-${randomUUID()}`)
    expect(printed.via).toBe('hub')
    await expect.poll(async () => (await onHub(printed.job)).status, POLL).toBe('printed')
    expect(copiesOf(bytes)).toBe(1)
    expect((await backend.request('GET', `/api/v1/print-jobs/${printed.job.print_job_id}`)).status).toBe(404)
    restore()
    const seen = await backend.waitForJob(printed.job.print_job_id, ['printed'], 30_000)
    expect(seen).toMatchObject({
      printer_id: printerId,
      status: 'printed',
      document_format: 'raw',
      origin: 'lan',
    })
    expect(
      (await backend.allJobs()).filter((job) => job.print_job_id === printed.job.print_job_id),
    ).toHaveLength(1)
  })

  it('a receipt the cloud printed, sent again on the LAN after the link broke, is answered as a replay', async () => {
    const key = `order-${randomUUID()}`
    const bytes = receipt(`breakfast ${key}`)
    const first = await till.print(rawJob(bytes), key)
    expect(first.via).toBe('cloud')
    await printer.waitForBytes(bytes.length)
    await expect.poll(() => copiesOf(bytes), POLL).toBe(1)
    cut()
    const again = await till.print(rawJob(bytes), key)
    expect(again).toMatchObject({ via: 'hub', job: { print_job_id: first.job.print_job_id } })
    await expect.poll(async () => (await onHub(again.job)).status, POLL).toBe('printed')
    restore()
    await backend.waitForJob(first.job.print_job_id, ['printed'], 30_000)
    expect(copiesOf(bytes)).toBe(1)
  })

  it('a receipt the hub holds but has not printed, sent again on the LAN, is the same job, printed once', async () => {
    printer.setCondition({ paperOut: true })
    const key = `order-${randomUUID()}`
    const bytes = receipt(`tea ${key}`)
    const first = await till.print(rawJob(bytes), key)
    expect(first.via).toBe('cloud')
    // The hub has the document and waits for paper: it told the cloud why the job is not printing yet.
    await expect
      .poll(async () => (await backend.job(first.job.print_job_id)).waiting_reason, POLL)
      .toBe('paper_out')
    cut()
    const again = await till.print(rawJob(bytes), key)
    expect(again).toMatchObject({ via: 'hub', job: { print_job_id: first.job.print_job_id } })
    printer.setCondition({ paperOut: false })
    await expect.poll(async () => (await onHub(first.job)).status, POLL).toBe('printed')
    restore()
    await backend.waitForJob(first.job.print_job_id, ['printed'], 30_000)
    expect(copiesOf(bytes)).toBe(1)
  })

  it('a receipt the cloud took but could not offer before the cut prints once, on the LAN; the cloud’s copy is dropped', async () => {
    cut()
    const key = `order-${randomUUID()}`
    const bytes = receipt(`coffee ${key}`)
    // The backend reaches the cloud (it is not behind the shop's link); the hub does not.
    const sent = await backend.request<PrintJob>('POST', '/api/v1/print-jobs/from-base64', rawJob(bytes), {
      'idempotency-key': key,
    })
    expect(sent.status).toBe(201)
    const onLan = await till.print(rawJob(bytes), key)
    expect(onLan.via).toBe('hub')
    expect(onLan.job.print_job_id).not.toBe(sent.body.print_job_id)
    await expect.poll(async () => (await onHub(onLan.job)).status, POLL).toBe('printed')
    restore()
    const dropped = await backend.waitForJob(sent.body.print_job_id, ['cancelled', 'printed'], 30_000)
    expect(dropped).toMatchObject({
      status: 'cancelled',
      origin: 'cloud',
      duplicate_of: onLan.job.print_job_id,
    })
    await backend.waitForJob(onLan.job.print_job_id, ['printed'], 30_000)
    expect(copiesOf(bytes)).toBe(1)
  })

  it('refuses a till with a wrong pin before sending it anything', async () => {
    const wrong = new Till({
      cloudUrl: 'http://127.0.0.1:9',
      hubUrl: `https://127.0.0.1:${lanPort}`,
      hubCertSha256: '0'.repeat(64),
      accessToken: 'none',
      cloudTimeoutMs: 200,
    })
    await expect(wrong.print(rawJob(receipt('never')), `order-${randomUUID()}`)).rejects.toThrow()
    expect(copiesOf(receipt('never'))).toBe(0)
  })

  it('refuses a job to the cloud’s path with another request under a key the LAN took (409), as the cloud would', async () => {
    cut()
    const key = `order-${randomUUID()}`
    await till.print(rawJob(receipt(`one ${key}`)), key)
    await expect(till.print(rawJob(receipt(`two ${key}`)), key)).rejects.toMatchObject({
      status: 409,
      body: { error_code: 'idempotency_key_conflict' },
    } satisfies Partial<PrintFailed>)
    restore()
  })

  it('keeps serving after the hub restarts while cut off', async () => {
    cut()
    await hub.stop()
    hub = await startHubProcess({
      cloudUrl: `http://127.0.0.1:${api.http.port}`,
      dataDir: hub.dataDir,
      printers: [printer.uri],
      env: { HUB_LAN_PORT: String(lanPort), HUB_LAN_HOST: '127.0.0.1', HUB_LAN_ADVERTISE: '0' },
    })
    const bytes = receipt(`after reboot ${randomUUID()}`)
    let printed: Printed | undefined
    await expect
      .poll(async () => {
        printed = await till
          .print(rawJob(bytes), `order-${bytes.length}-${Date.now()}`)
          .catch(() => undefined)
        return printed?.via
      }, POLL)
      .toBe('hub')
    await expect.poll(async () => (printed ? (await onHub(printed.job)).status : null), POLL).toBe('printed')
    restore()
  })
})
