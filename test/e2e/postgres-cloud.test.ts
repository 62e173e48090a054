import { readFileSync } from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { cloudCommand } from '../helpers/cli.ts'
import { type MosquittoServer, startMosquitto } from '../helpers/mosquitto-server.ts'
import { testDatabases } from '../helpers/postgres-server.ts'
import { tempDir } from '../helpers/temp-dir.ts'
import { type PrinterSimulator, startPrinterSimulator } from '../simulators/printer-simulator.ts'
import { ApiClient } from './api-client.ts'
import { type CloudProcess, setUpAccount, startCloudProcess, startHubProcess, stopAll } from './harness.ts'

/**
 * Two cloud nodes on one PostgreSQL (DATABASE_URL), one Mosquitto (MQTT_URL) and one documents directory both
 * mount (DATA_DIR), as a cluster runs: a real hub enrolled through one node prints a job created through the
 * other, and each node reads what the other wrote.
 */
const RECEIPT = Buffer.from('\x1b@Corner Bakery\n2 x Croissant   4.80\n\x1dVB\x00', 'latin1')

describe('two cloud nodes on PostgreSQL', () => {
  const shared = tempDir('e2e-pg-')
  const databases = testDatabases()
  let mosquitto: MosquittoServer
  let nodeA: CloudProcess
  let nodeB: CloudProcess
  let simulator: PrinterSimulator
  let apiA: ApiClient
  let apiB: ApiClient
  let printerId: string

  beforeAll(async () => {
    const databaseUrl = await databases.empty()
    mosquitto = await startMosquitto({
      config: async ({ port, dir }) => {
        const written = await cloudCommand<{ config_file: string }>(['mosquitto-config', '--dir', dir], {
          MQTT_URL: `mqtt://127.0.0.1:${port}`,
          DATA_DIR: shared.path,
        })
        return readFileSync(written.config_file, 'utf8')
      },
    })
    const node = (clientId: string) =>
      startCloudProcess({
        dataDir: shared.path,
        env: {
          DATABASE_URL: databaseUrl,
          MQTT_URL: mosquitto.url,
          MQTT_ADMIN_PASSWORD_FILE: path.join(mosquitto.dir, 'cloud-password'),
          MQTT_CLIENT_ID: clientId,
        },
      })
    // Both start at once on an empty database: the migrations run once.
    ;[nodeA, nodeB] = await Promise.all([node('cloud-pg-a'), node('cloud-pg-b')])
    const account = await setUpAccount(nodeA)
    apiA = new ApiClient(nodeA.url, account.accessToken)
    apiB = new ApiClient(nodeB.url, account.accessToken)
    simulator = await startPrinterSimulator({ language: 'escpos' })
    await startHubProcess({
      cloudUrl: nodeA.url,
      enroll: account.enrollmentToken,
      printers: [`${simulator.uri}&name=Receipts`],
    })
    const [printer] = await apiB.waitForPrinters(1)
    printerId = printer!.printer_id
  }, 90_000)

  afterAll(async () => {
    await stopAll()
    await simulator?.close()
    await mosquitto?.stop()
    shared.remove()
  })

  it('are both ready and say which database they use, without its password', async () => {
    for (const node of [nodeA, nodeB]) {
      expect((await fetch(`${node.url}/readyz`)).status).toBe(200)
      expect(node.logs.join('')).toContain(`"database":"postgres://postgres@localhost/`)
    }
  })

  it('print a job created through one node on the hub enrolled through the other', async () => {
    const job = await apiB.printRaw(printerId, RECEIPT, 'escpos')
    const done = await apiA.waitForJob(job.print_job_id, ['printed', 'failed'])
    expect(done).toMatchObject({ status: 'printed', failure_reason: null })
    expect(simulator.received().equals(RECEIPT)).toBe(true)
    expect(await nodeA.admin(['job', 'show', '--id', job.print_job_id])).toMatchObject({ status: 'printed' })
  })
})
