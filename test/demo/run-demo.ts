import { ApiClient } from '../e2e/api-client.ts'
import { setUpAccount, startCloudProcess, startHubProcess, stopAll } from '../e2e/harness.ts'
import { decodeEscpos, endsWithCut, escposText } from '../simulators/decoders/escpos.ts'
import { decodeZpl, zplFieldData } from '../simulators/decoders/zpl.ts'
import { startPrinterSimulator } from '../simulators/printer-simulator.ts'

/**
 * `npm run demo`: the whole product on this machine. It starts the cloud and a hub as real processes (through
 * their CLIs), two simulated network printers (a receipt printer and a label printer), prints a receipt and
 * a shipping label through the public API, follows both jobs to `printed`, and shows what each printer got.
 */
const RECEIPT = Buffer.concat([
  Buffer.from([0x1b, 0x40, 0x1b, 0x61, 0x01]),
  Buffer.from('CORNER BAKERY\n12 Mill Lane\n\n', 'latin1'),
  Buffer.from([0x1b, 0x61, 0x00]),
  Buffer.from(
    '2 x Croissant          4.80\n1 x Flat white         3.20\n--------------------------\nTOTAL                  8.00\n\nThank you!\n\n\n',
    'latin1',
  ),
  Buffer.from([0x1d, 0x56, 0x42, 0x00]),
])
const LABEL = Buffer.from(
  '^XA^CI28^FO40,40^A0N,40,40^FDShip to: A. Customer^FS^FO40,100^A0N,30,30^FD1 Harbour Road, Bristol^FS' +
    '^FO40,160^BY3^BCN,100,Y,N,N^FD1Z999AA10123456784^FS^XZ',
)

const step = (text: string) => console.log(`\n▶ ${text}`)

async function main() {
  step('Starting the cloud (API, MQTT broker, SQLite in a temp dir)')
  const cloud = await startCloudProcess()
  console.log(`  API ${cloud.url}  ·  MQTT mqtt://127.0.0.1:${cloud.mqttPort}  ·  data ${cloud.dataDir}`)

  step('Creating an account, an API client and a hub enrollment (cloud CLI)')
  const account = await setUpAccount(cloud, 'Corner Bakery')
  console.log(`  account ${account.accountId}; access token issued by POST /oauth/token`)

  step('Starting two simulated printers on 127.0.0.1')
  const receiptPrinter = await startPrinterSimulator({ language: 'escpos' })
  const labelPrinter = await startPrinterSimulator({ language: 'zpl' })
  console.log(`  receipt printer ${receiptPrinter.uri}\n  label printer   ${labelPrinter.uri}`)

  step('Starting the hub: it enrolls with the one-time token and connects over MQTT')
  const hub = await startHubProcess({
    cloudUrl: cloud.url,
    enroll: account.enrollmentToken,
    printers: [
      `${receiptPrinter.uri}&name=Front%20counter`,
      `${labelPrinter.uri}&name=Shipping%20labels&dpi=203`,
    ],
  })
  console.log(`  hub agent ${hub.agentId}, data ${hub.dataDir}`)

  const api = new ApiClient(cloud.url, account.accessToken)
  const printers = await api.waitForPrinters(2)
  for (const p of printers)
    console.log(
      `  online: ${p.name} (${p.languages.join(', ')}) health=${p.health?.state} id=${p.printer_id}`,
    )
  const byLanguage = (language: string) => printers.find((p) => p.languages.includes(language as never))!

  step('Printing a receipt (ESC/POS) and a shipping label (ZPL) via POST /api/v1/print-jobs/from-base64')
  const receiptJob = await api.printRaw(byLanguage('escpos').printer_id, RECEIPT, 'escpos', {
    intent: 'receipt',
  })
  const labelJob = await api.printRaw(byLanguage('zpl').printer_id, LABEL, 'zpl', {
    intent: 'shipping_label',
  })
  for (const job of [receiptJob, labelJob]) {
    const done = await api.waitForJob(job.print_job_id, ['printed', 'failed', 'cancelled'])
    console.log(
      `  ${done.print_job_id}: ${done.status} (created ${done.created_at}, completed ${done.completed_at})`,
    )
  }

  step('What reached the printers')
  const receiptBytes = receiptPrinter.received()
  const tokens = decodeEscpos(receiptBytes)
  console.log(
    `  receipt printer got ${receiptBytes.length} bytes, identical to the job: ${receiptBytes.equals(RECEIPT)}, ends with a cut: ${endsWithCut(tokens)}`,
  )
  console.log(escposText(tokens).trimEnd().replace(/^/gm, '    | '))
  const labelBytes = labelPrinter.received()
  console.log(
    `  label printer got ${labelBytes.length} bytes, identical to the job: ${labelBytes.equals(LABEL)}`,
  )
  for (const field of zplFieldData(decodeZpl(labelBytes))) console.log(`    field: ${field}`)

  step('Stopping everything')
  await stopAll()
  await receiptPrinter.close()
  await labelPrinter.close()
  const ok = receiptBytes.equals(RECEIPT) && labelBytes.equals(LABEL)
  console.log(ok ? '\nDemo finished: both jobs printed byte for byte.' : '\nDemo finished with differences.')
  process.exit(ok ? 0 : 1)
}

main().catch(async (error: unknown) => {
  console.error(`demo failed: ${(error as Error).message}`)
  await stopAll()
  process.exit(1)
})
