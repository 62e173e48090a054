import { execFile } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { mkdtemp, rm, stat, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import type { IppPrinterDescription } from '../../hub/ipp/printer-description.ts'
import { pwgRasterArgs } from '../../hub/ipp/pwg-raster-args.ts'
import { printPdf } from '../../hub/jobs/print-pdf.ts'
import { capabilitiesFor, headDotsFor, type MediaOptions } from '../../hub/languages/capabilities.ts'
import { driverFor } from '../../hub/languages/index.ts'
import type { RasterEncoding } from '../../hub/languages/raster-job.ts'
import { ghostscriptArgs } from '../../hub/render/ghostscript-policy.ts'
import type { GreyPage } from '../../hub/render/grey-page.ts'
import { type MediaPlan, planMedia } from '../../hub/render/media-plan.ts'
import { layOutPage } from '../../hub/render/page-layout.ts'
import { RenderWorker } from '../../hub/render/render-worker.ts'
import {
  ghostscriptArgs as cloudInspectionArgs,
  createPdfInspector,
} from '../../print-api/documents/pdf-inspection.ts'
import type { RawLanguage } from '../../protocol/enums.ts'
import { PRINT_OPTION_DEFAULTS, type ResolvedPrintOptions } from '../../protocol/print-job.ts'
import { ApiClient } from '../e2e/api-client.ts'
import { setUpAccount, startCloudProcess, startHubProcess, stopAll } from '../e2e/harness.ts'
import { type PrinterSimulator, startPrinterSimulator } from '../simulators/printer-simulator.ts'
import { PRODUCTION_HUB_ENV } from './hub-env.ts'
import {
  benchA4Pdf,
  benchLabelPdf,
  benchReceiptPdf,
  RECEIPT_HEIGHT_MM,
  RECEIPT_WIDTH_MM,
} from './pdf-documents.ts'
import { nowMs } from './stats.ts'

/**
 * Issue 8 point 8, "Figures": the time and peak memory to turn a PDF into what a printer takes, through the
 * hub's own pipeline (a warm RenderWorker, printPdf: render → layOutPage → encode, bytes discarded), beside
 * bare `gs` rasterising the same file in the same run (runs interleaved, so both see the same machine), with
 * the ratio of medians (goal: at most 1.15× bare gs):
 * 1. a one-page 80 mm receipt → ESC/POS; 2. a 4 × 6 in label → ZPL; 3. a ten-page A4 document → what an IPP
 * printer takes (the PDF itself, or PWG raster from Ghostscript's pwgraster device in the render worker);
 * then 4. a PDF label's time from POST to its last byte at a simulated ZPL printer, through real cloud and
 * hub processes.
 */
const env = process.env
const RUNS = Number(env.BENCH_PDF_RUNS ?? 20)
const WARMUP = 3
const E2E_JOBS = Number(env.BENCH_PDF_E2E_JOBS ?? 30)
const E2E_WARMUP = 3
const DEADLINE_MS = 60_000
const E2E_JOB_TIMEOUT_MS = 45_000
/** Runs of bare gs under GNU time for its peak RSS (apart from the timed runs: time adds a fork and exec). */
const MEMORY_RUNS = 3
const GNU_TIME = '/usr/bin/time'

const run = promisify(execFile)

// ---------------------------------------------------------------------------------------------- figures

interface Stats {
  median: number
  p95: number
  min: number
  n: number
}

/** Median and 95th percentile (nearest rank). */
function stats(samples: number[]): Stats {
  if (samples.length === 0) throw new Error('no samples')
  const sorted = [...samples].sort((a, b) => a - b)
  const rank = (p: number) =>
    sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))]!
  return { median: rank(0.5), p95: rank(0.95), min: sorted[0]!, n: sorted.length }
}

const ms = (x: number) => `${x.toFixed(1)} ms`
const mb = (kb: number) => `${(kb / 1024).toFixed(1)} MB`
const fmt = (s: Stats) =>
  `median ${ms(s.median).padStart(9)} | p95 ${ms(s.p95).padStart(9)} | min ${ms(s.min)}`
const kB = (bytes: number) => `${(bytes / 1024).toFixed(1)} kB`

/** A field of /proc/<pid>/status in kB (`VmHWM:  51234 kB` → 51234). */
function procStatusKb(pid: number, field: 'VmHWM' | 'VmRSS'): number {
  const match = new RegExp(`^${field}:\\s+(\\d+)`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
  if (!match) throw new Error(`no ${field} in /proc/${pid}/status`)
  return Number(match[1])
}

/** What the bench process itself holds in JS objects and Buffers (kB). */
function jsMemoryKb(): number {
  const m = process.memoryUsage()
  return (m.heapUsed + m.arrayBuffers) / 1024
}

/** Runs the tasks `WARMUP + RUNS` times, interleaved (the order rotating each round); the last RUNS timings of each. */
async function interleaved(tasks: (() => Promise<number>)[]): Promise<number[][]> {
  const samples = tasks.map((): number[] => [])
  for (let round = 0; round < WARMUP + RUNS; round++) {
    for (let k = 0; k < tasks.length; k++) {
      const i = (round + k) % tasks.length
      const t = await tasks[i]!()
      if (round >= WARMUP) samples[i]!.push(t)
    }
  }
  return samples
}

// ---------------------------------------------------------------------------------------------- bare gs

/** Bare Ghostscript, the CLI, one process per document: wall time from spawn to exit. */
async function bareGs(args: string[]): Promise<number> {
  const t0 = nowMs()
  await run('gs', args)
  return nowMs() - t0
}

/**
 * Peak RSS of a bare `gs` process in kB: GNU time's %M (the child's ru_maxrss from wait4: the most resident
 * memory the gs process ever had). Without GNU time, the gs process's VmHWM polled every millisecond until it
 * exits (a peak in its last millisecond can be missed). The largest of MEMORY_RUNS runs.
 */
async function bareGsPeakKb(args: string[]): Promise<{ kb: number; how: string }> {
  let peak = 0
  for (let i = 0; i < MEMORY_RUNS; i++) {
    if (existsSync(GNU_TIME)) {
      const { stderr } = await run(GNU_TIME, ['-f', '%M', 'gs', ...args])
      peak = Math.max(peak, Number(stderr.trim().split('\n').at(-1)))
    } else {
      const child = execFile('gs', args)
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
      let done = false
      void exited.then(() => {
        done = true
      })
      while (!done) {
        try {
          peak = Math.max(peak, procStatusKb(child.pid!, 'VmHWM'))
        } catch {
          // it ended (or is a zombie without memory) meanwhile
        }
        await new Promise((r) => setTimeout(r, 1))
      }
    }
  }
  const how = existsSync(GNU_TIME)
    ? `GNU time %M (ru_maxrss of the gs process), largest of ${MEMORY_RUNS} runs`
    : `the gs process's /proc VmHWM polled every 1 ms, largest of ${MEMORY_RUNS} runs`
  return { kb: peak, how }
}

// --------------------------------------------------------------------------------- raster cases (1 and 2)

interface RasterCase {
  title: string
  pdf: Buffer
  language: RawLanguage
  options: ResolvedPrintOptions
}

interface RasterFigures {
  hub: Stats
  gs: Stats
  renderOnly: Stats
  gsHubArgs: Stats
  layout: Stats
  encode: Stats
  bytes: number
  pages: number
  page: { width: number; height: number }
  image: { width: number; height: number }
  worker: WorkerMemory
  jsGrowthKb: number
  gsPeak: { kb: number; how: string }
}

/** The render worker process's memory (kB, /proc/<pid>/status): idle before any render, then peaks. */
interface WorkerMemory {
  readyRssKb: number
  readyHwmKb: number
  /** VmHWM once its first document (a warm-up) is done. */
  firstKb: number
  /** VmHWM at the end of the case. */
  peakKb: number
}

function workerMemoryLine(w: WorkerMemory): string {
  return (
    `      render worker process, VmHWM: ${mb(w.peakKb)} at the end of the case, ${mb(w.firstKb)} after its first ` +
    `document (idle before it: VmRSS ${mb(w.readyRssKb)}, VmHWM ${mb(w.readyHwmKb)})`
  )
}

function rasterPrinter(language: RawLanguage) {
  const media: MediaOptions = { dpi: null, widthMm: null, heightMm: null, headDots: null }
  return { capabilities: capabilitiesFor(language, media), headDots: headDotsFor(language, media) }
}

async function rasterCase(c: RasterCase, dir: string): Promise<RasterFigures> {
  const file = join(dir, `${c.language}.pdf`)
  await writeFile(file, c.pdf)
  const plan: MediaPlan = planMedia(c.options, rasterPrinter(c.language))
  const encoding: RasterEncoding = driverFor(c.language).raster
  const outDir = await mkdtemp(join(dir, `gs-${c.language}-`))
  const gsArgs = [
    '-q',
    '-dSAFER',
    '-dBATCH',
    '-dNOPAUSE',
    '-sDEVICE=pgmraw',
    `-r${plan.dpi}`,
    `-sOutputFile=${join(outDir, 'p-%d.pgm')}`,
    file,
  ]
  // The render worker's own argument list (ghostscript-policy.ts), run by the CLI: same work, other process.
  const gsHubArgs = ghostscriptArgs(file, outDir, plan.dpi).slice(1)

  // A fresh worker per case: VmHWM is per process lifetime.
  const renderer = new RenderWorker()
  try {
    await renderer.start()
    const pid = renderer.pid!
    const readyRssKb = procStatusKb(pid, 'VmRSS')
    const readyHwmKb = procStatusKb(pid, 'VmHWM')
    let bytes = 0
    let pages = 0
    let jsGrowthKb = 0
    let firstKb = 0
    const hub = async () => {
      bytes = 0
      const base = jsMemoryKb()
      const sample = () => {
        jsGrowthKb = Math.max(jsGrowthKb, jsMemoryKb() - base)
      }
      const t0 = nowMs()
      const printed = await printPdf({
        file,
        plan,
        encoding,
        copies: 1,
        renderer,
        deadlineMs: DEADLINE_MS,
        start: () => true,
        write: async (chunk) => {
          bytes += chunk.length
          sample()
        },
      })
      const t = nowMs() - t0
      sample()
      pages = printed ?? 0
      firstKb ||= procStatusKb(pid, 'VmHWM')
      return t
    }
    let rendered: GreyPage | undefined
    const renderOnly = async () => {
      const t0 = nowMs()
      for await (const page of renderer.render(file, { dpi: plan.dpi, deadlineMs: DEADLINE_MS }))
        rendered ??= page
      return nowMs() - t0
    }
    const [hubMs, gsMs, renderMs, gsHubMs] = await interleaved([
      hub,
      () => bareGs(gsArgs),
      renderOnly,
      () => bareGs(gsHubArgs),
    ])
    const peakKb = procStatusKb(pid, 'VmHWM')
    if (renderer.pid !== pid) throw new Error('the render worker was replaced during the case')

    // Layout (+ dither) and encoding alone, in this process, on the page the worker rendered.
    const page = rendered!
    const layoutMs: number[] = []
    const encodeMs: number[] = []
    let image = { width: 0, height: 0 }
    for (let i = 0; i < WARMUP + RUNS; i++) {
      const t0 = nowMs()
      const bitmap = layOutPage(page, plan)
      const t1 = nowMs()
      encoding.page(bitmap, 1, { copies: 1, dpi: plan.dpi })
      const t2 = nowMs()
      image = { width: bitmap.width, height: bitmap.height }
      if (i >= WARMUP) {
        layoutMs.push(t1 - t0)
        encodeMs.push(t2 - t1)
      }
    }
    const gsPeak = await bareGsPeakKb(gsArgs)
    return {
      hub: stats(hubMs!),
      gs: stats(gsMs!),
      renderOnly: stats(renderMs!),
      gsHubArgs: stats(gsHubMs!),
      layout: stats(layoutMs),
      encode: stats(encodeMs),
      bytes,
      pages,
      page: { width: page.width, height: page.height },
      image,
      worker: { readyRssKb, readyHwmKb, firstKb, peakKb },
      jsGrowthKb,
      gsPeak,
    }
  } finally {
    await renderer.stop()
    await rm(outDir, { recursive: true, force: true })
  }
}

function reportRaster(c: RasterCase, f: RasterFigures): string[] {
  const ratio = f.hub.median / f.gs.median
  return [
    `  ${c.title}`,
    `    PDF ${kB(c.pdf.length)}, ${f.pages} page; rendered ${f.page.width} × ${f.page.height} dots, sent as ` +
      `${f.image.width} × ${f.image.height} dots, ${kB(f.bytes)} of ${c.language === 'zpl' ? 'ZPL' : 'ESC/POS'}`,
    `    hub pipeline (printPdf, warm worker):  ${fmt(f.hub)}`,
    `    bare gs (CLI, pgmraw):                 ${fmt(f.gs)}`,
    `    ratio of medians hub / bare gs: ${ratio.toFixed(2)}x ${ratio <= 1.15 ? '(within the 1.15x goal)' : '(ABOVE the 1.15x goal)'}`,
    '    where the time goes:',
    `      worker render alone (pages read, no layout): ${fmt(f.renderOnly)}`,
    `      bare gs with the worker's own arguments:     ${fmt(f.gsHubArgs)}`,
    `        (bare gs − worker render alone, medians: ${ms(f.gsHubArgs.median - f.renderOnly.median)}: starting a gs process and ` +
      'loading libgs, which the warm worker does not pay)',
    `      layOutPage (resample + dither), in process:  ${fmt(f.layout)}`,
    `      ${`encode (${c.language}), in process:`.padEnd(45)}${fmt(f.encode)}`,
    '    peak memory:',
    workerMemoryLine(f.worker),
    `      bench process, largest heap + Buffer growth within one printPdf: ${mb(f.jsGrowthKb)}`,
    `      bare gs process: ${mb(f.gsPeak.kb)} (${f.gsPeak.how})`,
  ]
}

// ---------------------------------------------------------------------------------------- IPP case (3)

interface IppFigures {
  hub: Stats
  gs: Stats
  args: string[]
  outputBytes: number
  worker: WorkerMemory
  jsGrowthKb: number
  gsPeak: { kb: number; how: string }
}

/** An office printer that takes PWG raster only: 300 dpi, 8-bit grey, A4 loaded. */
const PWG_PRINTER: IppPrinterDescription = {
  capabilities: {
    document_formats: ['pdf'],
    raw_languages: [],
    dpi: [300],
    default_dpi: 300,
    media_width_mm: { min: 210, max: 210 },
    media_height_mm: { min: 297, max: 297 },
    default_media: { width_mm: 210, height_mm: 297 },
    color: false,
    duplex: false,
  },
  health: { state: 'ready', reasons: [], checked_at: new Date(0).toISOString() },
  name: 'Bench PWG printer',
  makeAndModel: null,
  documentFormats: ['image/pwg-raster'],
  takesPdf: false,
  takesPwgRaster: true,
  pwgRasterResolutions: [300],
  pwgRasterTypes: ['sgray_8'],
  mediaSupported: ['iso_a4_210x297mm'],
  jobTemplate: {
    copies: null,
    sides: [],
    printColorModes: ['monochrome'],
    orientations: [],
    printScalings: [],
    mediaColMembers: [],
    mediaSizes: [],
  },
}

async function ippCase(pdf: Buffer, dir: string): Promise<IppFigures> {
  const file = join(dir, 'a4.pdf')
  await writeFile(file, pdf)
  const options: ResolvedPrintOptions = { ...PRINT_OPTION_DEFAULTS, intent: 'a4_document' }
  const hubOut = join(dir, 'out.pwg')
  const gsOut = join(dir, 'gs-out.pwg')
  const args = pwgRasterArgs(file, hubOut, options, PWG_PRINTER)
  // The same command for the CLI, argv[0] dropped, into its own file.
  const gsArgs = args.slice(1).map((arg) => (arg.startsWith('-sOutputFile=') ? `-sOutputFile=${gsOut}` : arg))
  const renderer = new RenderWorker()
  try {
    await renderer.start()
    const pid = renderer.pid!
    const readyRssKb = procStatusKb(pid, 'VmRSS')
    const readyHwmKb = procStatusKb(pid, 'VmHWM')
    let jsGrowthKb = 0
    let firstKb = 0
    const hub = async () => {
      const base = jsMemoryKb()
      const t0 = nowMs()
      await renderer.convert(file, args, DEADLINE_MS)
      const t = nowMs() - t0
      jsGrowthKb = Math.max(jsGrowthKb, jsMemoryKb() - base)
      firstKb ||= procStatusKb(pid, 'VmHWM')
      return t
    }
    const [hubMs, gsMs] = await interleaved([hub, () => bareGs(gsArgs)])
    const peakKb = procStatusKb(pid, 'VmHWM')
    if (renderer.pid !== pid) throw new Error('the render worker was replaced during the case')
    const outputBytes = (await stat(hubOut)).size
    const gsPeak = await bareGsPeakKb(gsArgs)
    return {
      hub: stats(hubMs!),
      gs: stats(gsMs!),
      args,
      outputBytes,
      worker: { readyRssKb, readyHwmKb, firstKb, peakKb },
      jsGrowthKb,
      gsPeak,
    }
  } finally {
    await renderer.stop()
    await rm(hubOut, { force: true })
    await rm(gsOut, { force: true })
  }
}

function reportIpp(pdf: Buffer, f: IppFigures): string[] {
  const ratio = f.hub.median / f.gs.median
  const shown = f.args.slice(1, -2).filter((arg) => !arg.startsWith('-sOutputFile'))
  return [
    `  ten-page A4 document (text-heavy, PDF ${kB(pdf.length)}) → an IPP printer`,
    '    printer that takes application/pdf: the hub sends the PDF unchanged (IPP Print-Job), no rendering: nil',
    `    printer that takes PWG raster only: renderer.convert() with pwgRasterArgs, ${mb(f.outputBytes / 1024)} of PWG raster`,
    `      gs ${shown.join(' ')}`,
    `    hub (RenderWorker.convert, warm worker):  ${fmt(f.hub)}`,
    `    bare gs (CLI, same arguments):            ${fmt(f.gs)}`,
    `    ratio of medians hub / bare gs: ${ratio.toFixed(2)}x ${ratio <= 1.15 ? '(within the 1.15x goal)' : '(ABOVE the 1.15x goal)'}`,
    '    peak memory:',
    workerMemoryLine(f.worker),
    `      bench process, largest heap + Buffer growth within one convert: ${mb(f.jsGrowthKb)}`,
    `      bare gs process: ${mb(f.gsPeak.kb)} (${f.gsPeak.how})`,
  ]
}

// ----------------------------------------------------------------------------------- end to end (4)

/** Counts complete ZPL labels (`^XZ`) arriving at the simulator and resolves when the count reaches n. */
class LabelEnds {
  #tail = ''
  #count = 0
  #want: { n: number; resolve(t: number): void } | undefined
  readonly #unsubscribe: () => void

  constructor(simulator: PrinterSimulator) {
    this.#unsubscribe = simulator.onData((bytes) => {
      const t = nowMs()
      const text = this.#tail + bytes.toString('latin1')
      // `^XZ` cannot hide in a Z64 graphic field (Base64 has no `^`); the 2-character tail catches a split one.
      this.#count += text.split('^XZ').length - 1
      this.#tail = text.slice(-2)
      if (this.#want && this.#count >= this.#want.n) {
        this.#want.resolve(t)
        this.#want = undefined
      }
    })
  }

  get count(): number {
    return this.#count
  }

  /** The time (nowMs) at which label `n` (counted from 1) was complete at the printer. */
  until(n: number): Promise<number> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#want = undefined
        reject(new Error(`label ${n} not complete at the printer within ${E2E_JOB_TIMEOUT_MS} ms`))
      }, E2E_JOB_TIMEOUT_MS)
      this.#want = {
        n,
        resolve: (t) => {
          clearTimeout(timer)
          resolve(t)
        },
      }
    })
  }

  close(): void {
    this.#unsubscribe()
  }
}

interface EndToEndFigures {
  e2e: Stats
  post: Stats
  /** POST → 201, 99th percentile (nearest rank). */
  postP99: number
  /** The cloud's inspection as it was until issue 31: a `gs` process per PDF (nullpage at 72 dpi). */
  inspection: Stats
  /** The cloud's inspection now: createPdfInspector, a warm Ghostscript process (print-api/documents). */
  warmInspection: Stats
  labels: number
  failed: string[]
}

async function endToEnd(pdf: Buffer, dir: string): Promise<EndToEndFigures> {
  const simulator = await startPrinterSimulator({ language: 'zpl', name: 'Bench label' })
  try {
    const cloud = await startCloudProcess()
    const account = await setUpAccount(cloud, 'Bench PDF shop')
    const api = new ApiClient(cloud.url, account.accessToken)
    await startHubProcess({
      cloudUrl: cloud.url,
      enroll: account.enrollmentToken,
      printers: [simulator.uri],
      env: PRODUCTION_HUB_ENV,
    })
    const [printer] = await api.waitForPrinters(1)
    const printerId = printer!.printer_id
    const ends = new LabelEnds(simulator)
    const e2e: number[] = []
    const post: number[] = []
    const failed: string[] = []
    try {
      for (let i = 0; i < E2E_WARMUP + E2E_JOBS; i++) {
        const arrived = ends.until(ends.count + 1)
        const t0 = nowMs()
        const job = await api.printPdf(printerId, pdf, {
          media_width_mm: 101.6,
          media_height_mm: 152.4,
          dpi: 203,
        })
        const postMs = nowMs() - t0
        const t1 = await arrived
        // Outside the measured time: the job is over (printed) before the next POST, so jobs never overlap.
        const done = await api.waitForJob(
          job.print_job_id,
          ['printed', 'failed', 'cancelled'],
          E2E_JOB_TIMEOUT_MS,
        )
        if (done.status !== 'printed')
          failed.push(`${job.print_job_id}: ${done.status} ${done.failure_reason}`)
        if (i >= E2E_WARMUP) {
          e2e.push(t1 - t0)
          post.push(postMs)
        }
      }
    } finally {
      ends.close()
    }
    // Part of POST → 201: the cloud inspects every PDF it takes (print-api/documents/pdf-inspection.ts): a
    // process per PDF until issue 31 (the baseline), a warm Ghostscript process now; interleaved.
    const file = join(dir, 'inspected-label.pdf')
    await writeFile(file, pdf)
    const inspector = createPdfInspector({
      timeoutMs: DEADLINE_MS,
      maxConcurrent: 1,
      maxQueued: 0,
      maxQueuedPerAccount: 0,
    })
    const [inspection, warmInspection] = await interleaved([
      () => bareGs(cloudInspectionArgs(file)),
      async () => {
        const t0 = nowMs()
        await inspector.inspect(file, 'bench')
        return nowMs() - t0
      },
    ]).finally(() => inspector.close())
    return {
      e2e: stats(e2e),
      post: stats(post),
      postP99: [...post].sort((a, b) => a - b)[Math.max(0, Math.ceil(0.99 * post.length) - 1)]!,
      inspection: stats(inspection!),
      warmInspection: stats(warmInspection!),
      labels: ends.count,
      failed,
    }
  } finally {
    await stopAll()
    await simulator.close()
  }
}

function reportEndToEnd(pdf: Buffer, f: EndToEndFigures): string[] {
  return [
    '',
    'PDF label end to end (cloud serve + hub run as real processes, 1 ZPL printer simulator, 127.0.0.1)',
    `  the 4 × 6 in label (PDF ${kB(pdf.length)}), media 101.6 × 152.4 mm at 203 dpi, by POST /api/v1/print-jobs/from-base64;`,
    `  ${E2E_JOBS} jobs one at a time after ${E2E_WARMUP} warm-up, each printed before the next POST; hub with its production timings`,
    `  POST → the label's final ^XZ at the printer: ${fmt(f.e2e)}`,
    `  of which POST → 201 (cloud inspects the PDF):  ${fmt(f.post)} | p99 ${ms(f.postP99)}`,
    `  the cloud's inspection alone, ${RUNS} runs each after ${WARMUP} warm-up, interleaved:`,
    `    before issue 31, a gs process per PDF (nullpage -r72): ${fmt(f.inspection)}`,
    `    now, a warm Ghostscript process (createPdfInspector): ${fmt(f.warmInspection)}`,
    `  labels at the printer: ${f.labels} of ${E2E_WARMUP + E2E_JOBS}${f.failed.length ? `; NOT printed: ${f.failed.join(', ')}` : ', every job printed'}`,
  ]
}

// ---------------------------------------------------------------------------------------------- entry

export async function benchPdfRender(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'bench-pdf-'))
  try {
    const receipt: RasterCase = {
      title: `receipt ${RECEIPT_WIDTH_MM} × ${RECEIPT_HEIGHT_MM} mm → ESC/POS (80 mm roll, 576-dot head, 203 dpi; scaled to fit the head, dithered)`,
      pdf: benchReceiptPdf(),
      language: 'escpos',
      options: { ...PRINT_OPTION_DEFAULTS, intent: 'receipt' },
    }
    const label: RasterCase = {
      title: '4 × 6 in label (288 × 432 pt) → ZPL (media 101.6 × 152.4 mm, 203 dpi, 832-dot head; 1:1)',
      pdf: benchLabelPdf(),
      language: 'zpl',
      options: { ...PRINT_OPTION_DEFAULTS, media_width_mm: 101.6, media_height_mm: 152.4, dpi: 203 },
    }
    const a4 = benchA4Pdf(10)
    const receiptFigures = await rasterCase(receipt, dir)
    const labelFigures = await rasterCase(label, dir)
    const ippFigures = await ippCase(a4, dir)
    const lines = [
      '',
      `PDF rendering: the hub's pipeline beside bare gs on the same file, ${RUNS} runs each after ${WARMUP} warm-up,`,
      '  interleaved in one run; wall time per document (bytes to the printer discarded); goal: hub ≤ 1.15x bare gs',
      ...reportRaster(receipt, receiptFigures),
      ...reportRaster(label, labelFigures),
      ...reportIpp(a4, ippFigures),
      "  memory figures: VmHWM is the render worker process's peak resident set over its life (a fresh worker per",
      '  case: Node + tsx + libgs, of which the idle figures are the runtime before any render); the bench process',
      '  figure is heapUsed + arrayBuffers above their value at the start of one printPdf (garbage included), sampled',
      '  at each write to the printer and at the end; the bare gs figure is the peak RSS of the gs process alone.',
    ]
    for (const line of lines) console.log(line)
    const e2e = await endToEnd(benchLabelPdf(), dir)
    for (const line of reportEndToEnd(benchLabelPdf(), e2e)) console.log(line)
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
}
