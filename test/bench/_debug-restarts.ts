import { ApiClient } from '../e2e/api-client.ts'
import { setUpAccount, startCloudProcess, startHubProcess, stopAll } from '../e2e/harness.ts'
import { startPrinterSimulator } from '../simulators/printer-simulator.ts'
import { printerOnline } from './hub-footprint.ts'

const sim = await startPrinterSimulator({ language: 'escpos' })
const cloud = await startCloudProcess()
const account = await setUpAccount(cloud)
const api = new ApiClient(cloud.url, account.accessToken)
const env = { HUB_HEALTH_INTERVAL_MS: '30000', HUB_STATUS_TIMEOUT_MS: '2000', HUB_RECHECK_MS: '5000' }
let hub = await startHubProcess({ cloudUrl: cloud.url, enroll: account.enrollmentToken, printers: [sim.uri], env })
const [p] = await api.waitForPrinters(1)
try {
  for (let i = 0; i < 15; i++) {
    await hub.stop()
    const deadline = Date.now() + 5000
    while (await printerOnline(api, p!.printer_id)) {
      if (Date.now() > deadline) {
        console.log('STUCK ONLINE at iteration', i)
        console.log('HUB LOGS', hub.logs.join('').slice(-3000))
        console.log('CLOUD LOGS', cloud.logs.join('').split('\n').filter(l => /hub|mqtt|agent/.test(l)).slice(-15).join('\n'))
        throw new Error('stuck')
      }
      await new Promise((r) => setTimeout(r, 5))
    }
    hub = await startHubProcess({ cloudUrl: cloud.url, dataDir: hub.dataDir, printers: [sim.uri], env })
    while (!(await printerOnline(api, p!.printer_id))) await new Promise((r) => setTimeout(r, 5))
    console.log('iteration', i, 'ok')
  }
} finally {
  await stopAll()
  await sim.close()
}
