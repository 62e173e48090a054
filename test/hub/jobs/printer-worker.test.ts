import { createHash } from 'node:crypto'
import { existsSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { pino } from 'pino'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { keepOfferedDocument } from '../../../hub/jobs/offered-document.ts'
import { PrinterWorker, type WorkerOptions } from '../../../hub/jobs/printer-worker.ts'
import { Spool } from '../../../hub/jobs/spool.ts'
import { parsePrinterUri } from '../../../hub/printers/printer-uri.ts'
import { PrinterRegistry } from '../../../hub/printers/registry.ts'
import type { Renderer } from '../../../hub/render/render-worker.ts'
import { TransportError } from '../../../hub/transports/transport.ts'
import { tempDir } from '../../helpers/temp-dir.ts'
import { documentOf, liveOffer, SPOOL_PRINTER } from './job-offers.ts'
import { describeReport } from './job-reports.ts'
import { ScriptedPrinter } from './scripted-printer.ts'

const logger = pino({ level: 'silent' })
const SPEC = parsePrinterUri(`${SPOOL_PRINTER}?language=escpos`)
/** Long enough never to pass in a test: a waiting job goes on only when the test wakes the worker. */
const NEVER_MS = 3_600_000
/** DLE EOT 1, 2, 3 and 4, sent together. */
const ESCPOS_STATUS_REQUEST = '100401100402100403100404'

/** The outbox as the cloud reads it, `topic[:status or reason][:failure reason]`. */
const reports = (spool: Spool) => spool.outbox().map((m) => describeReport(m.topic, m.payload))

describe('PrinterWorker (real spool file, scripted ESC/POS printer)', () => {
  let dir: ReturnType<typeof tempDir>
  let spool: Spool
  let printer: ScriptedPrinter
  let downloads: string[]
  let workers: PrinterWorker[]

  beforeEach(() => {
    dir = tempDir('printer-worker-')
    spool = new Spool(path.join(dir.path, 'spool.sqlite'))
    printer = new ScriptedPrinter()
    downloads = []
    workers = []
  })
  afterEach(async () => {
    await Promise.all(workers.map((w) => w.stop()))
    spool.close()
    dir.remove()
  })

  function startWorker(options: Partial<WorkerOptions> = {}): PrinterWorker {
    const registry = new PrinterRegistry([SPEC], {
      createTransport: () => printer,
      describe: () => SPOOL_PRINTER,
      statusTimeoutMs: 50,
      onChange: () => {},
      logger,
    })
    const worker = new PrinterWorker(SPEC.key, {
      spool,
      registry,
      // The document of job n is documentOf(n); its sha256 field is n, zero-padded (liveOffer).
      download: async (url, sha256) => {
        downloads.push(url)
        const file = path.join(dir.path, sha256)
        writeFileSync(file, documentOf(Number(sha256)))
        return file
      },
      keepOffered: (document) => keepOfferedDocument(path.join(dir.path, 'offered'), document),
      logger,
      paperWaitTimeoutMs: NEVER_MS,
      unreachableTimeoutMs: NEVER_MS,
      recheckMs: NEVER_MS,
      statusTimeoutMs: 50,
      renderer: {} as Renderer, // RAW jobs only
      renderDeadlineMs: 1_000,
      ...options,
    })
    workers.push(worker)
    registries.set(worker, registry)
    return worker
  }
  const registries = new Map<PrinterWorker, PrinterRegistry>()
  const registryOf = (worker: PrinterWorker) => registries.get(worker) as PrinterRegistry

  const stateOf = (n: number) => spool.find(liveOffer(n).print_job_id)?.state

  it('asks the printer for its status, writes the document’s exact bytes, and reports printing then printed', async () => {
    spool.accept(liveOffer(1))
    startWorker().wake()
    await expect.poll(() => stateOf(1)).toBe('printed')
    expect(printer.sent('hex')).toEqual([ESCPOS_STATUS_REQUEST])
    expect(printer.bytes()).toEqual(documentOf(1))
    expect(printer.closes).toBe(1)
    expect(reports(spool)).toEqual(['job-ack', 'job-status:printing', 'job-status:printed'])
  })

  /** Offer `n` carrying its document, with the document's real SHA-256; `content` other bytes in its place. */
  const carrying = (n: number, content = documentOf(n)) => {
    const offer = liveOffer(n)
    const sha256 = createHash('sha256').update(documentOf(n)).digest('hex')
    return { ...offer, document: { ...offer.document, sha256, content_base64: content.toString('base64') } }
  }

  it('prints the document an offer carries without downloading it, from memory (no file)', async () => {
    spool.accept(carrying(1))
    startWorker().wake()
    await expect.poll(() => stateOf(1)).toBe('printed')
    expect(printer.bytes()).toEqual(documentOf(1))
    expect(downloads).toEqual([])
    expect(existsSync(path.join(dir.path, 'offered'))).toBe(false)
    expect(reports(spool)).toEqual(['job-ack', 'job-status:printing', 'job-status:printed'])
  })

  it('prints each copy of a carried document', async () => {
    const offer = carrying(1)
    spool.accept({ ...offer, options: { ...offer.options, copies: 2 } })
    startWorker().wake()
    await expect.poll(() => stateOf(1)).toBe('printed')
    expect(printer.bytes()).toEqual(Buffer.concat([documentOf(1), documentOf(1)]))
  })

  it('downloads the document when what the offer carries is not it (size or SHA-256)', async () => {
    const offer = carrying(1, documentOf(2))
    spool.accept(offer)
    startWorker({
      download: async (url) => {
        downloads.push(url)
        const file = path.join(dir.path, 'downloaded')
        writeFileSync(file, documentOf(1))
        return file
      },
    }).wake()
    await expect.poll(() => stateOf(1)).toBe('printed')
    expect(downloads).toEqual([offer.document.url])
    expect(printer.bytes()).toEqual(documentOf(1))
  })

  it('asks a printer that never answers status only until it has learnt so, then prints without waiting', async () => {
    printer.condition.silent = true
    const worker = startWorker()
    spool.accept(liveOffer(1))
    worker.wake()
    await expect.poll(() => stateOf(1)).toBe('printed')
    // The first job waited out its first status request (the driver asks no more after a silence); the second
    // sends none.
    expect(printer.sent('hex')).toEqual([ESCPOS_STATUS_REQUEST])
    spool.accept(liveOffer(2))
    worker.wake()
    await expect.poll(() => stateOf(2)).toBe('printed')
    expect(printer.sent('hex')).toEqual([ESCPOS_STATUS_REQUEST])
    expect(printer.bytes()).toEqual(Buffer.concat([documentOf(1), documentOf(2)]))
  })

  it('asks again before each job once the printer answered a health round', async () => {
    printer.condition.silent = true
    const worker = startWorker()
    spool.accept(liveOffer(1))
    worker.wake()
    await expect.poll(() => stateOf(1)).toBe('printed')
    printer.condition.silent = false
    await registryOf(worker).refresh(SPEC.key)
    spool.accept(liveOffer(2))
    worker.wake()
    await expect.poll(() => stateOf(2)).toBe('printed')
    // The first job's one unanswered request, then the health round's and the second job's, all answered.
    expect(printer.sent('hex')).toEqual([ESCPOS_STATUS_REQUEST, ESCPOS_STATUS_REQUEST, ESCPOS_STATUS_REQUEST])
  })

  it('writes the document once per copy', async () => {
    const offer = liveOffer(1)
    spool.accept({ ...offer, options: { ...offer.options, copies: 3 } })
    startWorker().wake()
    await expect.poll(() => stateOf(1)).toBe('printed')
    expect(printer.bytes()).toEqual(Buffer.concat([documentOf(1), documentOf(1), documentOf(1)]))
  })

  it('prints a printer’s jobs one at a time in creation order', async () => {
    spool.accept(liveOffer(3))
    spool.accept(liveOffer(2))
    startWorker().wake()
    await expect.poll(() => [stateOf(2), stateOf(3)]).toEqual(['printed', 'printed'])
    expect(printer.bytes()).toEqual(Buffer.concat([documentOf(2), documentOf(3)]))
  })

  it('holds a job while the paper is out, tells the cloud why, and prints it once paper is loaded', async () => {
    printer.condition.paper = 'out'
    spool.accept(liveOffer(1))
    const worker = startWorker()
    worker.wake()
    await expect.poll(() => reports(spool)).toEqual(['job-ack', 'job-waiting:paper_out'])
    expect(stateOf(1)).toBe('queued')
    expect(printer.written).toEqual([])
    printer.condition.paper = 'in'
    worker.wake() // cuts the recheck short, as a new offer or a cancel does
    await expect.poll(() => stateOf(1)).toBe('printed')
    expect(printer.bytes()).toEqual(documentOf(1))
    expect(reports(spool)).toEqual([
      'job-ack',
      'job-waiting:paper_out',
      'job-status:printing',
      'job-status:printed',
    ])
  })

  it('fails a job with printer_paper_out when the paper stays out past the wait', async () => {
    printer.condition.paper = 'out'
    spool.accept(liveOffer(1))
    startWorker({ paperWaitTimeoutMs: 0 }).wake()
    await expect.poll(() => stateOf(1)).toBe('failed')
    expect(printer.written).toEqual([])
    expect(reports(spool)).toEqual([
      'job-ack',
      'job-waiting:paper_out',
      'job-status:failed:printer_paper_out',
    ])
  })

  it('fails a job with printer_unreachable when the printer cannot be reached past the wait', async () => {
    printer.condition.openError = new TransportError('unreachable', 'connect ECONNREFUSED 127.0.0.1:9100')
    spool.accept(liveOffer(1))
    startWorker({ unreachableTimeoutMs: 0 }).wake()
    await expect.poll(() => stateOf(1)).toBe('failed')
    expect(reports(spool)).toEqual([
      'job-ack',
      'job-waiting:printer_unreachable',
      'job-status:failed:printer_unreachable',
    ])
    expect(spool.outbox().at(-1)?.payload).toMatchObject({ detail: 'connect ECONNREFUSED 127.0.0.1:9100' })
  })

  it('fails a job `interrupted` when the printer stops taking bytes, and never sends it again', async () => {
    printer.condition.writeError = new TransportError('disconnected', 'the printer closed the connection')
    spool.accept(liveOffer(1))
    spool.accept(liveOffer(2))
    const worker = startWorker()
    worker.wake()
    await expect.poll(() => [stateOf(1), stateOf(2)]).toEqual(['failed', 'failed'])
    expect(reports(spool)).toEqual([
      'job-ack',
      'job-ack',
      'job-status:printing',
      'job-status:failed:interrupted',
      'job-status:printing',
      'job-status:failed:interrupted',
    ])
    expect(spool.outbox()[3]?.payload).toMatchObject({ detail: 'the printer closed the connection' })
    expect(spool.next(SPEC.key)).toBeUndefined()
  })

  it('drops a job cancelled while it waits: nothing reaches the printer and the worker goes idle', async () => {
    printer.condition.paper = 'out'
    spool.accept(liveOffer(1))
    const worker = startWorker()
    worker.wake()
    await expect.poll(() => reports(spool)).toEqual(['job-ack', 'job-waiting:paper_out'])
    printer.condition.paper = 'in'
    expect(spool.drop(liveOffer(1).print_job_id, 'cancelled')).toBe('cancelled')
    worker.wake()
    await expect.poll(() => worker.busy).toBe(false)
    expect(printer.written).toEqual([])
    expect(reports(spool)).toEqual(['job-ack', 'job-waiting:paper_out', 'job-status:cancelled'])
  })

  it('fails a job whose deadline passed before it started, without downloading it', async () => {
    spool.accept({ ...liveOffer(1), expires_at: '2000-01-01T00:00:00.000Z' })
    startWorker().wake()
    await expect.poll(() => stateOf(1)).toBe('failed')
    expect(downloads).toEqual([])
    expect(printer.written).toEqual([])
    expect(reports(spool)).toEqual(['job-ack', 'job-status:failed:expired'])
  })
})
