import { readFileSync } from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { cloudCommand } from '../helpers/cli.ts'
import { type MosquittoServer, startMosquitto } from '../helpers/mosquitto-server.ts'
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

/**
 * The cloud on an external Mosquitto 2.0 (MQTT_URL), configured by `cloud mosquitto-config` and started with
 * `mosquitto -c DIR/mosquitto.conf`, as an operator would: a real hub enrolls, is given its broker client,
 * connects with its credential and prints a RAW job; revoked, it is cut off by the broker itself.
 */
const RECEIPT = Buffer.from('\x1b@Corner Bakery\n2 x Croissant   4.80\n\x1dVB\x00', 'latin1')

describe('the cloud on Mosquitto (MQTT_URL)', () => {
  const scratch = tempDir('e2e-mosquitto-')
  let mosquitto: MosquittoServer
  let cloud: CloudProcess
  let hub: HubProcess
  let api: ApiClient
  let simulator: PrinterSimulator
  let printerId: string

  beforeAll(async () => {
    mosquitto = await startMosquitto({
      config: async ({ port, dir }) => {
        const written = await cloudCommand<{ config_file: string; start: string }>(
          ['mosquitto-config', '--dir', dir],
          {
            MQTT_URL: `mqtt://127.0.0.1:${port}`,
            DATA_DIR: scratch.path,
          },
        )
        expect(written.start).toBe(`mosquitto -c ${path.join(dir, 'mosquitto.conf')}`)
        return readFileSync(written.config_file, 'utf8')
      },
    })
    cloud = await startCloudProcess({
      env: {
        MQTT_URL: mosquitto.url,
        MQTT_ADMIN_PASSWORD_FILE: path.join(mosquitto.dir, 'cloud-password'),
        MQTT_CLIENT_ID: 'cloud-e2e-a',
      },
    })
    const account = await setUpAccount(cloud)
    api = new ApiClient(cloud.url, account.accessToken)
    simulator = await startPrinterSimulator({ language: 'escpos' })
    hub = await startHubProcess({
      cloudUrl: cloud.url,
      enroll: account.enrollmentToken,
      printers: [`${simulator.uri}&name=Receipts`],
    })
    const [printer] = await api.waitForPrinters(1)
    printerId = printer!.printer_id
  }, 60_000)

  afterAll(async () => {
    await stopAll()
    await simulator?.close()
    await mosquitto?.stop()
    scratch.remove()
  })

  it('serves readiness through the external broker and never logs its password', async () => {
    const res = await fetch(`${cloud.url}/readyz`)
    expect(res.status).toBe(200)
    const password = readFileSync(path.join(mosquitto.dir, 'cloud-password'), 'utf8').trim()
    expect(cloud.logs.join('')).not.toContain(password)
    expect(mosquitto.log()).toContain(`as ${hub.agentId}`)
  })

  it('prints a RAW job end to end through Mosquitto', async () => {
    const job = await api.printRaw(printerId, RECEIPT, 'escpos')
    const done = await api.waitForJob(job.print_job_id, ['printed', 'failed'])
    expect(done).toMatchObject({ status: 'printed', failure_reason: null })
    expect(simulator.received().equals(RECEIPT)).toBe(true)
  })

  it('cuts a revoked hub off at the broker: disconnected, and refused when it tries again', async () => {
    const revoked = await cloud.admin(['hub', 'revoke', '--id', hub.agentId])
    expect(revoked.agent_id).toBe(hub.agentId)
    await expect
      .poll(() => cloud.logs.join(''), { timeout: 10_000 })
      .toContain('hub revoked: broker client deleted and mqtt session closed')
    await expect.poll(() => hub.logs.join(''), { timeout: 10_000 }).toMatch(/mqtt connection lost/)
    // Its reconnect attempts are refused by Mosquitto (no such client any more).
    await expect
      .poll(() => mosquitto.log(), { timeout: 15_000 })
      .toMatch(new RegExp(`Client ${hub.agentId} disconnected, not authorised|not authorised`))
  })
})
