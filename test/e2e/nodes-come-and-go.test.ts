import { randomUUID } from 'node:crypto'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { PrintJob } from '../../protocol/print-job.ts'
import { startConfiguredMosquitto } from '../cloud/broker/mosquitto-peer.ts'
import { freePort } from '../helpers/free-port.ts'
import type { MosquittoServer } from '../helpers/mosquitto-server.ts'
import { testDatabases } from '../helpers/postgres-server.ts'
import { type RedisServer, startRedisServer } from '../helpers/redis-server.ts'
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy.ts'
import { tempDir } from '../helpers/temp-dir.ts'
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
import { namedReceipt, occurrences } from './receipts.ts'
import { RetryingClient } from './retrying-client.ts'

/**
 * Issue 26 point 3: cloud nodes come and go as in a fleet (autoscaling, a host replaced, a port changed), on
 * one PostgreSQL, one Mosquitto and one Redis, behind a TCP load balancer, each node on a port of its own and
 * none given MQTT_CLIENT_ID, so that no node's id is ever used again. A node that stops (SIGTERM) or dies
 * (SIGKILL) must stop taking the hubs' messages at once, without an operator: before, each node's persistent
 * session kept its place in the shared subscription for 7 days and Mosquitto kept queueing its turn of the
 * hubs' presence and reports there.
 * First as the issue found it: a node served and was stopped, another served and was killed, then a hub
 * enrolls with a new node and its printers must come online. Then jobs flow while nodes are started, stopped
 * and killed, and the hub restarts right after a kill: every job ends printed and its bytes are at its printer
 * exactly once.
 */
const BATCH = 5
/** Every node the test starts, each on a port of its own. */
const NODES = 6
/**
 * What a killed node had taken is recovered by the other nodes' timers: jobs silent for 30 s are asked about
 * again (silent-jobs.ts) and a hub a will took offline is asked who is here after 20 s. Shortened here so that
 * the test waits for the recovery, not for production intervals.
 */
const RECOVERY_IN_SECONDS = { SILENT_JOB_MS: '3000', WILL_RECHECK_MS: '2000' }

describe('cloud nodes that come and go, never to return', { timeout: 300_000 }, () => {
  const shared = tempDir('e2e-nodes-come-and-go-')
  const databases = testDatabases()
  let mosquitto: MosquittoServer
  let redis: RedisServer
  let balancer: TcpProxy
  let ports: number[]
  let nextPort = 0
  let databaseUrl: string
  const simulators: PrinterSimulator[] = []
  /** Nodes serving now, oldest first. */
  const live: CloudProcess[] = []
  const started: CloudProcess[] = []
  let accessToken: string
  let enrollmentToken: string
  let hub: HubProcess
  let printerIds: string[]
  /** Each node's exit: SIGTERM must end a node cleanly (0). */
  const exits: { node: number; how: 'SIGTERM' | 'SIGKILL'; code: number | null }[] = []

  const startNode = async () => {
    const node = await startCloudProcess({
      dataDir: shared.path,
      port: ports[nextPort++]!,
      env: {
        // Every node tells hubs and documents the balancer's address, as behind a real one.
        PUBLIC_URL: `http://127.0.0.1:${balancer.port}`,
        DATABASE_URL: databaseUrl,
        MQTT_URL: mosquitto.url,
        MQTT_ADMIN_PASSWORD_FILE: path.join(mosquitto.dir, 'cloud-password'),
        REDIS_URL: redis.url,
        ...RECOVERY_IN_SECONDS,
      },
    })
    live.push(node)
    started.push(node)
    return node
  }
  const stopNode = async (node: CloudProcess) => {
    live.splice(live.indexOf(node), 1)
    exits.push({ node: node.port, how: 'SIGTERM', code: await node.stop() })
  }
  const killNode = async (node: CloudProcess) => {
    live.splice(live.indexOf(node), 1)
    await node.kill()
    exits.push({ node: node.port, how: 'SIGKILL', code: null })
  }

  beforeAll(async () => {
    ;[databaseUrl, redis] = await Promise.all([databases.migrated(), startRedisServer()])
    mosquitto = await startConfiguredMosquitto(shared.path)
    ports = []
    for (let i = 0; i < NODES; i++) ports.push(await freePort())
    balancer = await startTcpProxy(ports)
    for (const name of ['Front', 'Back'])
      simulators.push(await startPrinterSimulator({ language: 'escpos', name }))
    // As the issue found it: one node served and was stopped, another served and was killed.
    const first = await startNode()
    ;({ accessToken, enrollmentToken } = await setUpAccount(first))
    await stopNode(first)
    await killNode(await startNode())
  }, 120_000)

  afterAll(async () => {
    await stopAll()
    for (const simulator of simulators) await simulator.close()
    await balancer?.close()
    await mosquitto?.stop()
    await redis?.stop()
    shared.remove()
  })

  it('brings a hub enrolled after nodes left online, with no operator', async () => {
    await Promise.all([startNode(), startNode()])
    hub = await startHubProcess({
      cloudUrl: `http://127.0.0.1:${balancer.port}`,
      enroll: enrollmentToken,
      printers: simulators.map((simulator) => simulator.uri),
    })
    const printers = await new ApiClient(live[1]!.url, accessToken).waitForPrinters(2, 60_000)
    printerIds = ['Front', 'Back'].map(
      (name) => printers.find((printer) => printer.name === name)!.printer_id,
    )
  })

  it('prints every job exactly once while nodes are started, stopped with SIGTERM and killed', async () => {
    expect(printerIds).toHaveLength(2)
    const deadline = Date.now() + 240_000
    const jobs: { job: PrintJob; bytes: Buffer; printer: number }[] = []
    let n = 0
    /** A batch through the newest node, not waited for: the nodes change while it is offered and printed. */
    const batch = async () => {
      const node = live.at(-1)!
      const client = new RetryingClient(node.url, accessToken, deadline)
      await Promise.all(
        Array.from({ length: BATCH }, async () => {
          const { bytes } = namedReceipt(`JOB-${String(n).padStart(3, '0')}`)
          const printer = n++ % printerIds.length
          const { job } = await client.create(
            {
              printer_id: printerIds[printer],
              document_base64: bytes.toString('base64'),
              document_format: 'raw',
              document_raw_language: 'escpos',
            },
            randomUUID(),
          )
          jobs.push({ job, bytes, printer })
        }),
      )
    }
    const allAtPrinters = () =>
      jobs.every((entry) => occurrences(simulators[entry.printer]!.received(), entry.bytes) >= 1)

    const [c, d] = live as [CloudProcess, CloudProcess]
    await batch()
    const e = await startNode()
    await batch()
    await stopNode(c)
    await batch()
    await killNode(d)
    // The hub connects again right after a node died; its presence must reach a node that records it. (Its
    // own jobs are at the printers first: a hub stopped while it prints fails the job, `interrupted`.)
    await expect.poll(allAtPrinters, { timeout: 90_000, interval: 100 }).toBe(true)
    expect(await hub.stop()).toBe(0)
    hub = await startHubProcess({
      cloudUrl: `http://127.0.0.1:${balancer.port}`,
      dataDir: hub.dataDir,
      printers: simulators.map((simulator) => simulator.uri),
    })
    await batch()
    const f = await startNode()
    await batch()
    await killNode(e)
    await batch()
    expect(live).toEqual([f])
    expect(started).toHaveLength(NODES)

    const api = new ApiClient(f.url, accessToken)
    const finals = await Promise.all(
      jobs.map(({ job }) => api.waitForJob(job.print_job_id, ['printed', 'failed', 'cancelled'], 150_000)),
    )
    const report = jobs.map((entry, i) => ({
      job: entry.job.print_job_id,
      status: finals[i]!.status,
      copies: occurrences(simulators[entry.printer]!.received(), entry.bytes),
    }))
    expect(report).toEqual(
      jobs.map((entry) => ({ job: entry.job.print_job_id, status: 'printed', copies: 1 })),
    )
    // Nothing else reached the printers: exactly the jobs' bytes, each once.
    for (const [index, simulator] of simulators.entries()) {
      const expected = jobs
        .filter((entry) => entry.printer === index)
        .reduce((sum, entry) => sum + entry.bytes.length, 0)
      expect(simulator.received().length).toBe(expected)
    }
    expect(exits.filter((exit) => exit.how === 'SIGTERM').map((exit) => exit.code)).toEqual([0, 0])
    // No node's MQTT client id was ever used by another.
    const clientIds = started.map(
      (node) =>
        node.logs
          .join('')
          .split('\n')
          .filter((line) => line.includes('connected to the MQTT broker'))
          .map((line) => (JSON.parse(line) as { client_id: string }).client_id)[0],
    )
    expect(clientIds.every((id) => typeof id === 'string')).toBe(true)
    expect(new Set(clientIds).size).toBe(NODES)
    // The hub, back after a node died, is online, and so are its printers.
    expect((await api.printers()).map((printer) => printer.online)).toEqual([true, true])
  })
})
