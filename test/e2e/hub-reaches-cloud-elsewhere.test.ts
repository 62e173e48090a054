import { afterAll, describe, expect, it } from 'vitest'
import { freePort } from '../helpers/free-port.ts'
import { type PrinterSimulator, startPrinterSimulator } from '../simulators/printer-simulator.ts'
import { ApiClient } from './api-client.ts'
import { setUpAccount, startCloudProcess, startHubProcess, stopAll } from './harness.ts'

/**
 * Issue 7, point 1: with `npm start`'s defaults (PUBLIC_URL http://localhost:PORT, no MQTT_PUBLIC_URL), a hub
 * on another machine must still be told a broker and document address it can reach. Here the cloud listens
 * on 127.0.0.2 only, so "localhost" (127.0.0.1) does not reach it, and the hub reaches it as 127.0.0.2.
 */
describe('a hub that reaches the cloud by another address than PUBLIC_URL', { timeout: 60_000 }, () => {
  let printer: PrinterSimulator | undefined
  afterAll(async () => {
    await stopAll()
    await printer?.close()
  })

  it('is told the broker at the host it used, and prints', async () => {
    // PUBLIC_URL as `npm start` derives it when unset.
    const port = await freePort()
    const started = await startCloudProcess({
      port,
      env: { HOST: '127.0.0.2', PUBLIC_URL: `http://localhost:${port}` },
    })
    const cloudUrl = `http://127.0.0.2:${started.port}`
    const cloud = { ...started, url: cloudUrl }
    const account = await setUpAccount(cloud)
    const api = new ApiClient(cloudUrl, account.accessToken)
    printer = await startPrinterSimulator({ language: 'escpos' })
    const hub = await startHubProcess({ cloudUrl, enroll: account.enrollmentToken, printers: [printer.uri] })
    expect(hub.logs.join('')).toContain(`"mqtt":"mqtt://127.0.0.2:${started.mqttPort}"`)
    const [online] = await api.waitForPrinters(1)
    const bytes = Buffer.from('\x1b@from elsewhere\n', 'latin1')
    const job = await api.printRaw(online!.printer_id, bytes, 'escpos')
    await api.waitForJob(job.print_job_id, ['printed'])
    expect(printer.received().equals(bytes)).toBe(true)
    // The ready line names addresses a client can use (the listener's own, not a wildcard).
    const ready = started.logs
      .join('')
      .split('\n')
      .find((line) => line.includes('"cloud ready"'))
    expect(JSON.parse(ready!)).toMatchObject({
      api: [`http://127.0.0.2:${port}`],
      mqtt: [`mqtt://127.0.0.2:${started.mqttPort}`],
    })
  })

  it('says once why it cannot reach the broker, and which setting to check', async () => {
    const nowhere = await freePort()
    const cloud = await startCloudProcess({ env: { MQTT_PUBLIC_URL: `mqtt://127.0.0.1:${nowhere}` } })
    const account = await setUpAccount(cloud)
    const hub = await startHubProcess({ cloudUrl: cloud.url, enroll: account.enrollmentToken, printers: [] })
    const lines = () =>
      hub.logs
        .join('')
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line) as Record<string, unknown>)
    // Several attempts, one explanation.
    await expect
      .poll(() => lines().filter((l) => l.msg === 'mqtt connection lost').length, { timeout: 20_000 })
      .toBeGreaterThanOrEqual(3)
    const said = lines().filter((l) => l.msg === 'cannot reach the MQTT broker')
    expect(said).toHaveLength(1)
    expect(said[0]).toMatchObject({ mqtt_url: `mqtt://127.0.0.1:${nowhere}`, reason: 'ECONNREFUSED' })
    expect(String(said[0]!.hint)).toContain('MQTT_PUBLIC_URL')
  })
})
