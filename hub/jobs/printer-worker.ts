import type { Logger } from 'pino'
import type { FailureReason } from '../../protocol/hub-messages.ts'
import type { WaitingReason } from '../../protocol/print-job.ts'
import { type HealthState, isBlocking, type PrinterHealth } from '../../protocol/printer-health.ts'
import { CloudError } from '../cloud/cloud-client.ts'
import type { IppPrinterDescription } from '../ipp/ipp-printer.ts'
import { driverFor } from '../languages/index.ts'
import { readHealth } from '../languages/read-health.ts'
import { type IppPrinterSpec, isIppPrinter } from '../printers/ipp-printer-uri.ts'
import type { PrinterSpec } from '../printers/printer-spec.ts'
import type { PrinterRegistry } from '../printers/registry.ts'
import { planMedia } from '../render/media-plan.ts'
import { RenderError } from '../render/render-error.ts'
import type { Renderer } from '../render/render-worker.ts'
import type { Transport } from '../transports/transport.ts'
import { offeredBytes } from './offered-document.ts'
import { printIpp } from './print-ipp.ts'
import { PrinterWriteError, printPdf } from './print-pdf.ts'
import type { Spool, SpooledJob } from './spool.ts'
import { streamFile } from './stream-file.ts'
import { Waiter } from './wait.ts'

export interface WorkerOptions {
  spool: Spool
  registry: PrinterRegistry
  download(url: string, sha256: string, sizeBytes: number): Promise<string>
  /** The document the offer carries, kept as a download would be; null when there is none to keep. */
  keepOffered(document: SpooledJob['offer']['document']): Promise<string | null>
  logger: Logger
  /** A job waits this long for paper to be loaded or a cover closed, then fails. */
  paperWaitTimeoutMs: number
  /** A job waits this long for an unreachable printer, then fails with `printer_unreachable`. */
  unreachableTimeoutMs: number
  /** How often a waiting job looks again. */
  recheckMs: number
  statusTimeoutMs: number
  /** Renders PDFs (shared by every printer of the hub). */
  renderer: Renderer
  /** Ghostscript's time for one document (docs/pdf-printing.md). */
  renderDeadlineMs: number
}

/** A look at the printer: its health, and what printing needs of it when it can print. */
interface Probe<T> {
  health: PrinterHealth
  ready: T | null
  /** Lets go of what the look opened when the job does not go ahead with it. */
  release(): Promise<void>
}

const WAIT_REASON: Partial<Record<HealthState, FailureReason>> = {
  paper_out: 'printer_paper_out',
  cover_open: 'printer_cover_open',
}
/** The longest a Retry-After from the cloud holds a download back (one default quota window). */
const MAX_RETRY_AFTER_MS = 60_000

/**
 * Prints one printer's jobs, one at a time, in creation order (docs/architecture.md: what keeps it safe). Each job:
 * check its deadline, download and verify the document, wait for a printer that can print, mark it
 * `printing` durably, write its bytes (a RAW payload `copies` times; a PDF rendered page by page, see
 * print-pdf.ts), mark it `printed`. Once `printing` is recorded, a failure of the printer is `interrupted`:
 * the bytes may have reached paper, so the job is never sent again. A PDF that cannot be rendered fails with
 * `render_failed`, before or after pages were printed.
 */
export class PrinterWorker {
  readonly #key: string
  readonly #o: WorkerOptions
  readonly #waiter = new Waiter()
  #running: Promise<void> | undefined
  #stopped = false
  /** Set by every wake; the drain loop runs until a pass starts with it clear (no lost wake-ups). */
  #wanted = false

  constructor(printerKey: string, options: WorkerOptions) {
    this.#key = printerKey
    this.#o = options
  }

  get busy(): boolean {
    return this.#running !== undefined
  }

  /** There may be new work (or a cancel): start, or cut a wait short. */
  wake(): void {
    this.#wanted = true
    this.#waiter.wake()
    if (this.#running !== undefined || this.#stopped) return
    this.#running = this.#drain().finally(() => {
      this.#running = undefined
    })
  }

  /** Lets the job being written finish, then stops. */
  async stop(): Promise<void> {
    this.#stopped = true
    this.#waiter.wake()
    await this.#running
  }

  async #drain(): Promise<void> {
    while (this.#wanted && !this.#stopped) {
      this.#wanted = false
      await this.#printQueued()
    }
  }

  async #printQueued(): Promise<void> {
    for (
      let job = this.#o.spool.next(this.#key);
      job && !this.#stopped;
      job = this.#o.spool.next(this.#key)
    ) {
      try {
        await this.#print(job)
      } catch (error) {
        const failed = this.#o.spool.fail(
          job.print_job_id,
          'queued',
          'printer_error',
          (error as Error).message,
        )
        const interrupted =
          !failed && this.#o.spool.fail(job.print_job_id, 'printing', 'interrupted', (error as Error).message)
        this.#o.logger.error(
          {
            ...this.#jobKeys(job),
            err: error,
            ...((failed || interrupted) && {
              status: 'failed',
              failure_reason: failed ? 'printer_error' : 'interrupted',
            }),
          },
          'print job failed',
        )
      }
    }
  }

  #fail(job: SpooledJob, reason: FailureReason, detail: string): void {
    if (!this.#o.spool.fail(job.print_job_id, 'queued', reason, detail)) return
    this.#o.logger.warn(
      { ...this.#jobKeys(job), status: 'failed', failure_reason: reason, detail },
      reason === 'expired' ? 'print job expired' : 'print job failed',
    )
  }

  /** What every line about a job carries (the worker's logger adds its printer's key). */
  #jobKeys(job: SpooledJob) {
    return { print_job_id: job.print_job_id, printer_id: job.offer.printer_id }
  }

  #stillQueued(job: SpooledJob): boolean {
    return !this.#stopped && this.#o.spool.find(job.print_job_id)?.state === 'queued'
  }

  async #print(job: SpooledJob): Promise<void> {
    const { offer } = job
    if (Date.parse(offer.expires_at) <= Date.now())
      return this.#fail(job, 'expired', 'not started before its deadline')
    const spec = this.#o.registry.spec(this.#key)
    if (!spec) return this.#fail(job, 'printer_unreachable', `this hub has no printer ${this.#key}`)
    const pdf = offer.document.format === 'pdf'
    if (pdf ? !spec.capabilities.document_formats.includes('pdf') : isIppPrinter(spec))
      return this.#fail(
        job,
        'unsupported_document',
        `this printer does not print ${pdf ? 'PDFs' : 'RAW payloads'}`,
      )
    // A RAW document the offer carries is printed from memory: no file written and read back before its
    // first byte (each a few calls through libuv's thread pool, about 0.2 ms each).
    const carried = pdf ? null : offeredBytes(offer.document)
    const file = carried ?? (await this.#download(job))
    if (!file || !this.#stillQueued(job)) return
    if (isIppPrinter(spec)) {
      const printer = await this.#whenReady(job, () => this.#probeIpp())
      if (printer && typeof file === 'string') await this.#printIpp(job, spec, printer, file)
      return
    }
    const transport = await this.#whenReady(job, () => this.#probeRaster(spec))
    if (!transport) return
    try {
      if (typeof file !== 'string') await this.#printRaw(job, file, transport)
      else if (pdf) await this.#printPdf(job, spec, file, transport)
      else await this.#printRaw(job, file, transport)
    } finally {
      await transport.close()
    }
  }

  /** Records `printing` (false when the job is no longer queued: cancelled in the meantime). */
  #start(job: SpooledJob): boolean {
    if (!this.#o.spool.startPrinting(job.print_job_id)) return false
    this.#o.logger.info({ ...this.#jobKeys(job), status: 'printing' }, 'print job printing')
    return true
  }

  #finish(job: SpooledJob): void {
    if (this.#o.spool.finish(job.print_job_id)) {
      this.#o.logger.info({ ...this.#jobKeys(job), status: 'printed' }, 'print job printed')
    }
  }

  /** The job ends `failed` from `printing`: the printer stopped taking bytes, or the PDF stopped rendering. */
  #failPrinting(job: SpooledJob, reason: FailureReason, error: unknown, detail: string): void {
    if (this.#o.spool.fail(job.print_job_id, 'printing', reason, detail)) {
      this.#o.logger.warn(
        { ...this.#jobKeys(job), status: 'failed', failure_reason: reason, detail, err: error },
        'print job failed',
      )
    }
  }

  async #printIpp(job: SpooledJob, spec: IppPrinterSpec, printer: IppPrinterDescription, file: string) {
    const { paperWaitTimeoutMs, unreachableTimeoutMs } = this.#o
    const result = await printIpp({
      file,
      spec,
      printer,
      options: job.offer.options,
      jobName: job.print_job_id,
      renderer: this.#o.renderer,
      deadlineMs: this.#o.renderDeadlineMs,
      // The printer may hold the job as long as a raster printer's job may wait, for paper and for a link.
      timeoutMs: paperWaitTimeoutMs + unreachableTimeoutMs,
      start: () => this.#start(job),
    })
    if (result.outcome === 'printed') return this.#finish(job)
    if (result.outcome === 'not_started') return
    if (result.started) return this.#failPrinting(job, result.reason, undefined, result.detail)
    this.#fail(job, result.reason, result.detail)
  }

  /** A RAW document, from its file or (one the offer carried) from memory, once per copy. */
  async #printRaw(job: SpooledJob, document: string | Buffer, transport: Transport): Promise<void> {
    if (!this.#start(job)) return
    try {
      for (let copy = 0; copy < job.offer.options.copies; copy++)
        if (typeof document === 'string') await streamFile(document, (chunk) => transport.write(chunk))
        else await transport.write(document)
    } catch (error) {
      return this.#failPrinting(job, 'interrupted', error, (error as Error).message)
    }
    this.#finish(job)
  }

  async #printPdf(job: SpooledJob, spec: PrinterSpec, file: string, transport: Transport): Promise<void> {
    let started = false
    let pages: number | null
    try {
      pages = await printPdf({
        file,
        plan: planMedia(job.offer.options, spec),
        encoding: driverFor(spec.language).raster,
        copies: job.offer.options.copies,
        renderer: this.#o.renderer,
        deadlineMs: this.#o.renderDeadlineMs,
        start: () => {
          started = this.#start(job)
          return started
        },
        write: (bytes) => transport.write(bytes),
      })
    } catch (error) {
      if (error instanceof PrinterWriteError)
        return this.#failPrinting(job, 'interrupted', error.cause, error.message)
      if (!(error instanceof RenderError)) throw error
      const detail = `${error.reason}: ${error.message}`
      if (started) return this.#failPrinting(job, 'render_failed', error, detail)
      return this.#fail(job, 'render_failed', detail)
    }
    if (pages !== null) this.#finish(job)
  }

  /**
   * The document the offer carries (a small one, keepOffered), or else downloads it, retrying for up to
   * `unreachableTimeoutMs` while the cloud is unreachable, answers 5xx (a cloud restart must not fail jobs)
   * or asks the hub to slow down (429): a wait the cloud names in
   * Retry-After is honoured, up to MAX_RETRY_AFTER_MS and never past that deadline. A refusal (another 4xx)
   * or a second checksum mismatch fails the job.
   */
  async #download(job: SpooledJob): Promise<string | null> {
    // A file that cannot be written here fails the download that follows, with its reason.
    const offered = await this.#o.keepOffered(job.offer.document).catch(() => null)
    if (offered !== null) return offered
    const { url, sha256, size_bytes } = job.offer.document
    const deadline = Date.now() + this.#o.unreachableTimeoutMs
    let mismatches = 0
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.#o.download(url, sha256, size_bytes)
      } catch (error) {
        const cloudError = error instanceof CloudError ? error : null
        if (cloudError?.code === 'checksum_mismatch') mismatches++
        const left = deadline - Date.now()
        if (mismatches >= 2 || cloudError?.refused || left <= 0) {
          this.#fail(job, mismatches >= 2 ? 'checksum_mismatch' : 'document_download_failed', String(error))
          return null
        }
        const asked = cloudError?.retryAfterMs ?? null
        let wait = Math.min(this.#o.recheckMs * 2 ** attempt, 10_000)
        if (asked !== null) {
          wait = Math.max(this.#o.recheckMs, Math.min(asked, MAX_RETRY_AFTER_MS))
          this.#o.logger.info(
            { print_job_id: job.print_job_id, status: cloudError?.status, retry_after_ms: asked },
            'cloud asked to retry the download later',
          )
        }
        await this.#waiter.sleep(Math.min(wait, left))
        if (!this.#stillQueued(job)) return null
      }
    }
  }

  /** A raster printer's look: its status over a connection that stays open for the job if it can print. */
  async #probeRaster(spec: PrinterSpec): Promise<Probe<Transport>> {
    const { registry } = this.#o
    const transport = registry.transportFor(this.#key)
    let health: PrinterHealth
    try {
      await transport.open()
      // A printer that did not answer its last status request is not asked before each job (the idle health
      // rounds go on asking): its answer would be the same silence, a status timeout per job.
      const last = registry.health(this.#key)
      if (!registry.answersStatus(this.#key) && last?.reasons.includes('no_status_reply'))
        return { health: last, ready: transport, release: () => transport.close() }
      health = await readHealth(transport, spec.language, { timeoutMs: this.#o.statusTimeoutMs })
    } catch (error) {
      health = {
        state: 'offline',
        // Bounded as the protocol's PrinterHealth is: an over-long reason would void the whole state report.
        reasons: [String((error as Error).message).slice(0, 200)],
        checked_at: new Date().toISOString(),
      }
    }
    this.#o.registry.record(this.#key, health)
    return { health, ready: transport, release: () => transport.close() }
  }

  /** An IPP printer's look: Get-Printer-Attributes, which describes it as well. */
  async #probeIpp(): Promise<Probe<IppPrinterDescription>> {
    const health = await this.#o.registry.refresh(this.#key)
    return { health, ready: this.#o.registry.ippDescription(this.#key) ?? null, release: async () => {} }
  }

  /**
   * What printing needs of a printer that can print now, or null when the job failed or was cancelled while
   * it waited: for an unreachable printer up to `unreachableTimeoutMs`, for paper or a closed cover up to
   * `paperWaitTimeoutMs`, telling the cloud why it waits.
   */
  async #whenReady<T>(job: SpooledJob, probe: () => Promise<Probe<T>>): Promise<T | null> {
    const { recheckMs, paperWaitTimeoutMs, unreachableTimeoutMs } = this.#o
    const started = Date.now()
    let told: WaitingReason | null = null
    /** Tells the cloud why the job waits, once per change of reason. */
    const waitFor = (reason: WaitingReason) => {
      if (reason === told) return
      told = reason
      this.#o.spool.waiting(job.print_job_id, reason)
    }
    for (;;) {
      const { health, ready, release } = await probe()
      const waiting = Date.now() - started
      if (health.state === 'offline' || ready === null) {
        await release()
        waitFor('printer_unreachable')
        if (waiting >= unreachableTimeoutMs) {
          this.#fail(job, 'printer_unreachable', health.reasons.join(', '))
          return null
        }
      } else if (isBlocking(health.state)) {
        await release()
        waitFor(health.state)
        if (waiting >= paperWaitTimeoutMs) {
          this.#fail(job, WAIT_REASON[health.state] ?? 'printer_error', health.reasons.join(', '))
          return null
        }
      } else {
        return ready
      }
      await this.#waiter.sleep(recheckMs)
      if (!this.#stillQueued(job)) return null
    }
  }
}
