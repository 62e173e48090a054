import { ApiClient } from '../e2e/api-client.ts'
import { setUpAccount, startCloudProcess, startHubProcess, stopAll } from '../e2e/harness.ts'
import { startPrinterSimulator } from '../simulators/printer-simulator.ts'
import { PRODUCTION_HUB_ENV } from './hub-env.ts'
import { formatSummary, nowMs, summarize } from './stats.ts'

const JOBS = Number(process.env.BENCH_SILENT_JOBS ?? 20)

/**
 * Issue 31, second figure: a raw job to a printer that never answers status queries (the README's socat
 * printer, many cheap network printers), POST → `printed` seen through the API, polled every 5 ms; with the
 * hub's production timings (a 2 s status timeout). Each status request it went unanswered used to cost every
 * job that timeout; the hub now learns it once per printer (hub/printers/registry.ts, answersStatus).
 */
export async function benchSilentPrinter(): Promise<void> {
  const printer = await startPrinterSimulator({ language: 'escpos', answersStatus: false, name: 'Silent' })
  try {
    const cloud = await startCloudProcess()
    const account = await setUpAccount(cloud, 'Bench shop')
    const api = new ApiClient(cloud.url, account.accessToken)
    await startHubProcess({
      cloudUrl: cloud.url,
      enroll: account.enrollmentToken,
      printers: [printer.uri],
      env: PRODUCTION_HUB_ENV,
    })
    const [online] = await api.waitForPrinters(1)
    const samples: number[] = []
    for (let n = 0; n < JOBS; n++) {
      const started = nowMs()
      const job = await api.printRaw(
        online!.printer_id,
        Buffer.from(`\x1b@silent ${n}\n`, 'latin1'),
        'escpos',
      )
      for (;;) {
        if ((await api.job(job.print_job_id)).status === 'printed') break
        await new Promise((resolve) => setTimeout(resolve, 5))
      }
      samples.push(nowMs() - started)
    }
    console.log('silent printer (no status replies)')
    console.log(
      `  POST → printed seen through the API, ${JOBS} jobs one at a time: ${formatSummary(summarize(samples))}`,
    )
    console.log(
      `  first job ${samples[0]?.toFixed(1)} ms (it may still wait out a status request the hub had not tried yet)`,
    )
  } finally {
    await stopAll()
    await printer.close()
  }
}
