import { ApiClient } from '../e2e/api-client.ts'
import { setUpAccount, startCloudProcess, startHubProcess, stopAll } from '../e2e/harness.ts'
import { type PrinterSimulator, startPrinterSimulator } from '../simulators/printer-simulator.ts'
import { PRODUCTION_HUB_ENV } from './hub-env.ts'
import {
  type HubMemory,
  hubMemory,
  measureStartUps,
  printerOnline,
  runtimeBaseline,
} from './hub-footprint.ts'
import { measureMqttRoundTrips } from './mqtt-round-trip.ts'
import { formatSummary, median, nowMs, summarize } from './stats.ts'

/**
 * End-to-end latency of a raw job through real processes (`cloud serve` and `hub run`, started through their
 * CLIs by the e2e harness) and one simulated ESC/POS printer on 127.0.0.1: POST /api/v1/print-jobs/from-base64
 * → the job's last byte at the printer, jobs sent one at a time. In the same run, on the same broker, a bare
 * MQTT QoS 1 round trip, and the ratio between the two; then the hub's idle memory and its start-up time.
 */
const env = process.env
const WARMUP = Number(env.BENCH_E2E_WARMUP ?? 50)
const JOBS = Number(env.BENCH_E2E_JOBS ?? 1000)
const MQTT_ROUND_TRIPS = Number(env.BENCH_MQTT_ROUND_TRIPS ?? 1000)
const CONCURRENT_JOBS = Number(env.BENCH_E2E_CONCURRENT_JOBS ?? 200)
const IN_FLIGHT = 16
const STARTS = 5
const IDLE_MS = 3000
const JOB_TIMEOUT_MS = 10_000

const markerOf = (n: number) => `BENCH-${String(n).padStart(6, '0')}\n`
/** `ESC @` (initialise) and a unique line: the line's newline is the job's last byte. */
const payloadOf = (n: number) => Buffer.from(`\x1b@${markerOf(n)}`, 'latin1')

/** Resolves with the time at which the printer received a given marker (its last byte), in `nowMs()`. */
class Arrivals {
  #tail = ''
  #want:
    | { marker: string; resolve(t: number): void; reject(e: Error): void; timer: NodeJS.Timeout }
    | undefined
  readonly #unsubscribe: () => void

  constructor(simulator: PrinterSimulator) {
    this.#unsubscribe = simulator.onData((bytes) => {
      const t = nowMs()
      this.#tail = (this.#tail + bytes.toString('latin1')).slice(-64)
      const want = this.#want
      if (want && this.#tail.includes(want.marker)) {
        this.#want = undefined
        this.#tail = ''
        clearTimeout(want.timer)
        want.resolve(t)
      }
    })
  }

  expect(marker: string): Promise<number> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#want = undefined
        reject(new Error(`no ${JSON.stringify(marker)} at the printer within ${JOB_TIMEOUT_MS} ms`))
      }, JOB_TIMEOUT_MS)
      this.#want = { marker, resolve, reject, timer }
    })
  }

  close(): void {
    if (this.#want) clearTimeout(this.#want.timer)
    this.#unsubscribe()
  }
}

/** One job: t0 just before the POST, t1 when its last byte reached the printer. */
async function oneJob(api: ApiClient, printerId: string, arrivals: Arrivals, n: number) {
  const arrived = arrivals.expect(markerOf(n))
  const t0 = nowMs()
  const posted = api.printRaw(printerId, payloadOf(n), 'escpos').then(() => nowMs() - t0)
  const [postMs, t1] = await Promise.all([posted, arrived])
  return { e2eMs: t1 - t0, postMs }
}

/** `CONCURRENT_JOBS` jobs with `IN_FLIGHT` POSTs at a time to the one printer: jobs per second to paper. */
async function concurrentPhase(
  api: ApiClient,
  printerId: string,
  simulator: PrinterSimulator,
  first: number,
) {
  simulator.clear()
  const payloads = Array.from({ length: CONCURRENT_JOBS }, (_, i) => payloadOf(first + i))
  const total = payloads.reduce((sum, p) => sum + p.length, 0)
  let next = 0
  const t0 = nowMs()
  const done = simulator.waitForBytes(total, 60_000)
  await Promise.all(
    Array.from({ length: IN_FLIGHT }, async () => {
      while (next < payloads.length) await api.printRaw(printerId, payloads[next++]!, 'escpos')
    }),
  )
  const received = (await done).toString('latin1')
  const seconds = (nowMs() - t0) / 1000
  const missing = payloads.filter((_, i) => received.split(markerOf(first + i)).length !== 2).length
  return { jobsPerSecond: CONCURRENT_JOBS / seconds, seconds, missing, extraBytes: received.length - total }
}

const mb = (m: HubMemory) =>
  `VmRSS ${m.rssMb.toFixed(1)} MB (peak VmHWM ${m.peakRssMb.toFixed(1)} MB), ${m.threads} threads, ` +
  `${m.children.length} child processes${m.children.length ? ` (+${m.childrenRssMb.toFixed(1)} MB)` : ''}`

interface Results {
  e2e: number[]
  post: number[]
  byteForByte: boolean
  mqtt: Awaited<ReturnType<typeof measureMqttRoundTrips>>
  concurrent: Awaited<ReturnType<typeof concurrentPhase>>
  freshMemory: HubMemory
  usedMemory: HubMemory
  baseline: Awaited<ReturnType<typeof runtimeBaseline>>
  startUps: Awaited<ReturnType<typeof measureStartUps>>
}

function report(r: Results): void {
  const e2e = summarize(r.e2e)
  const base = r.mqtt.jobStatus
  const ready = r.startUps.runs.map((run) => run.readyMs)
  const online = r.startUps.runs.map((run) => run.onlineMs)
  const range = (xs: number[]) => `${Math.min(...xs).toFixed(0)}–${Math.max(...xs).toFixed(0)} ms`
  const c = r.concurrent
  const lines = [
    '',
    'raw job end to end (cloud serve + hub run as real processes, 1 ESC/POS printer simulator, 127.0.0.1)',
    `  POST /api/v1/print-jobs/from-base64 → the job's last byte at the printer; ${JOBS} jobs one at a time`,
    `  after ${WARMUP} warm-up; payload ${payloadOf(0).length} bytes; hub with its production timings`,
    `  e2e latency:           ${formatSummary(e2e)}`,
    `  of which POST → 201:   ${formatSummary(summarize(r.post))}`,
    `  bytes at the printer:  ${r.byteForByte ? 'every job byte for byte, in order, none twice' : 'MISMATCH'}`,
    '',
    'bare MQTT QoS 1 round trip on the same broker, same run (an enrolled probe hub, mqtt.js, TCP_NODELAY)',
    '  measured: PUBLISH (QoS 1) → PUBACK, client → aedes → client. The broker lets a hub publish only on its',
    '  own hub→cloud topics and subscribe only to its cloud→hub ones, so no message can loop back to a client;',
    '  this is the round trip a hub waits for on each report it sends.',
    `  job-status, unknown job (validated, looked up, ignored): ${formatSummary(base, 3)}`,
    `  presence online (also updates the agent row, re-offers): ${formatSummary(r.mqtt.presence, 3)}`,
    `  ratio e2e / MQTT (job-status): p50 ${(e2e.p50 / base.p50).toFixed(1)}x, p99 ${(e2e.p99 / base.p99).toFixed(1)}x`,
    '',
    `throughput to one printer: ${CONCURRENT_JOBS} jobs, ${IN_FLIGHT} POSTs in flight → ${c.jobsPerSecond.toFixed(0)} jobs/s to paper` +
      ` (${c.seconds.toFixed(2)} s; ${c.missing || c.extraBytes ? `${c.missing} jobs missing or doubled, ${c.extraBytes} extra bytes` : 'every job exactly once'})`,
    '',
    `hub idle memory (pid ${r.freshMemory.pid}: ${r.freshMemory.cmdline.replace(/ --cloud.*/, ' …')})`,
    `  ${IDLE_MS / 1000} s idle after start:        ${mb(r.freshMemory)}`,
    `  ${IDLE_MS / 1000} s idle after ${WARMUP + JOBS + CONCURRENT_JOBS} jobs:   ${mb(r.usedMemory)}`,
    `  runtime floor, empty \`node --import tsx\` program: VmRSS ${r.baseline.rssMb.toFixed(1)} MB`,
    '',
    `hub start-up (${STARTS} restarts of \`hub run\` on an enrolled data dir, 1 printer)`,
    `  spawn → 'hub ready' log line:   median ${median(ready).toFixed(0)} ms (${range(ready)})`,
    `  spawn → printer online in API:  median ${median(online).toFixed(0)} ms (${range(online)})`,
    `  runtime floor, empty \`node --import tsx\` program, spawn → first line: median ${r.baseline.startMs.toFixed(0)} ms`,
    ...(r.startUps.staleOnline > 0
      ? [
          `  note: after ${r.startUps.staleOnline} of ${STARTS} clean stops (SIGTERM) the API still showed the printer online`,
          "  3 s later: a state report processed after the hub's offline presence marks its printers online again.",
        ]
      : []),
  ]
  for (const line of lines) console.log(line)
}

export async function benchEndToEnd(): Promise<void> {
  const simulator = await startPrinterSimulator({ language: 'escpos', name: 'Bench receipt' })
  try {
    const cloud = await startCloudProcess()
    const account = await setUpAccount(cloud, 'Bench shop')
    const api = new ApiClient(cloud.url, account.accessToken)
    const hub = await startHubProcess({
      cloudUrl: cloud.url,
      enroll: account.enrollmentToken,
      printers: [simulator.uri],
      env: PRODUCTION_HUB_ENV,
    })
    const [printer] = await api.waitForPrinters(1)
    const printerId = printer!.printer_id

    // 1. Idle memory of a freshly started hub that has printed nothing; meanwhile, the runtime's floor.
    const [baseline] = await Promise.all([
      runtimeBaseline(STARTS, IDLE_MS),
      new Promise((r) => setTimeout(r, IDLE_MS)),
    ])
    const freshMemory = hubMemory(hub)

    // 2. Sequential jobs: warm-up, then the measured ones, each waiting for the previous one's last byte.
    const arrivals = new Arrivals(simulator)
    const e2e: number[] = []
    const post: number[] = []
    try {
      for (let n = 0; n < WARMUP; n++) await oneJob(api, printerId, arrivals, n)
      simulator.clear()
      for (let n = WARMUP; n < WARMUP + JOBS; n++) {
        const { e2eMs, postMs } = await oneJob(api, printerId, arrivals, n)
        e2e.push(e2eMs)
        post.push(postMs)
      }
    } finally {
      arrivals.close()
    }
    const expected = Buffer.concat(Array.from({ length: JOBS }, (_, i) => payloadOf(WARMUP + i)))
    const byteForByte = simulator.received().equals(expected)

    // 3. Bare MQTT QoS 1 round trips on the same broker, same run.
    const mqtt = await measureMqttRoundTrips(cloud, account.accountId, {
      warmup: 100,
      count: MQTT_ROUND_TRIPS,
    })

    // 4. Optional throughput: many POSTs in flight to one printer (which prints one job at a time).
    const concurrent = await concurrentPhase(api, printerId, simulator, WARMUP + JOBS)

    // 5. Idle memory after all that work.
    await new Promise((r) => setTimeout(r, IDLE_MS))
    const usedMemory = hubMemory(hub)

    // 6. Start-up: restart the enrolled hub (no token) STARTS times.
    const startUps = await measureStartUps({
      hub,
      api,
      cloudUrl: cloud.url,
      printerUri: simulator.uri,
      printerId,
      env: PRODUCTION_HUB_ENV,
      times: STARTS,
    })
    if (!(await printerOnline(api, printerId))) throw new Error('printer offline after the restarts')

    report({ e2e, post, byteForByte, mqtt, concurrent, freshMemory, usedMemory, baseline, startUps })
  } finally {
    await stopAll()
    await simulator.close()
  }
}
