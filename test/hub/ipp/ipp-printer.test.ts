import { readFileSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  describeIppPrinter,
  IppError,
  type IppPrinterDescription,
  ippErrorHealth,
  printIppJob,
  readIppHealth,
} from '../../../hub/ipp/ipp-printer.ts'
import { PRINT_OPTION_DEFAULTS, type ResolvedPrintOptions } from '../../../protocol/print-job.ts'
import { freePort } from '../../helpers/free-port.ts'
import { type IppEvePrinter, startIppEvePrinter } from '../../helpers/ipp-printer.ts'
import { makePdf } from '../../helpers/pdf.ts'
import { tempDir } from '../../helpers/temp-dir.ts'

// A colour, two-sided IPP Everywhere printer taking PDF and PWG raster, on ipp:// and ipps://.
let printer: IppEvePrinter
let described: IppPrinterDescription
const files = tempDir('print-hub-ipp-test-')
const pdfBytes = makePdf(2, 'IPP test page')
const pdf = path.join(files.path, 'two-pages.pdf')
const QUICK = { pollMs: 20, timeoutMs: 20_000 }

beforeAll(async () => {
  writeFileSync(pdf, pdfBytes)
  printer = await startIppEvePrinter({
    formats: ['application/pdf', 'image/pwg-raster'],
    color: true,
    duplex: true,
    tls: true,
    name: 'Front office',
  })
  described = await describeIppPrinter(printer.uri, { timeoutMs: 5_000 })
})
afterAll(async () => {
  await printer?.stop()
  files.remove()
})

const options = (changes: Partial<ResolvedPrintOptions> = {}): ResolvedPrintOptions => ({
  ...PRINT_OPTION_DEFAULTS,
  ...changes,
})
const print = (
  jobName: string,
  changes: Partial<ResolvedPrintOptions> = {},
  more: { signal?: AbortSignal } = {},
) =>
  printIppJob(printer.uri, {
    file: pdf,
    format: 'application/pdf',
    jobName,
    options: options(changes),
    printer: described,
    ...QUICK,
    ...more,
  })

describe('describeIppPrinter against ippeveprinter', () => {
  it('reads what the printer is and can do', () => {
    expect(described.capabilities).toEqual({
      document_formats: ['pdf'],
      raw_languages: [],
      dpi: [300, 600],
      default_dpi: 600,
      // ippeveprinter's sizes run from 3 × 5 in (index card) to 8.5 × 14 in (legal)
      media_width_mm: { min: 76.2, max: 215.9 },
      media_height_mm: { min: 127, max: 355.6 },
      default_media: { width_mm: 215.9, height_mm: 279.4 },
      color: true,
      duplex: true,
    })
    expect(described).toMatchObject({
      name: 'Front office',
      makeAndModel: 'Example Printer',
      takesPdf: true,
      takesPwgRaster: true,
      pwgRasterResolutions: [300, 600],
      health: { state: 'ready', reasons: [] },
    })
    expect(described.documentFormats).toEqual(expect.arrayContaining(['application/pdf', 'image/pwg-raster']))
    expect(described.mediaSupported).toEqual(
      expect.arrayContaining(['iso_a4_210x297mm', 'na_letter_8.5x11in']),
    )
  })

  it('reads it over ipps:// with TLS, trusting its certificate', async () => {
    const overTls = await describeIppPrinter(printer.ippsUri, {
      timeoutMs: 5_000,
      tls: { ca: printer.certificate! },
    })
    expect(overTls.capabilities).toEqual(described.capabilities)
  })

  it('refuses a certificate it was not told to trust', async () => {
    const error = await describeIppPrinter(printer.ippsUri, { timeoutMs: 5_000 }).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(IppError)
    expect((error as IppError).kind).toBe('tls')
  })
})

describe('printIppJob against ippeveprinter', () => {
  it('prints a PDF: the job completes and the printer has the very bytes', async () => {
    const outcome = await print('byte-check')
    expect(outcome).toEqual({
      state: 'completed',
      reasons: ['job-completed-successfully'],
      message: 'Job completed.',
      jobId: expect.any(Number),
    })
    const spooled = printer.spooledFile(outcome.jobId!)
    expect(spooled).toBeDefined()
    expect(readFileSync(spooled!).equals(pdfBytes)).toBe(true)
  })

  it("sends the job's copies, sides, media, colour and orientation", async () => {
    const outcome = await print('attributes', {
      copies: 3,
      duplex_mode: 'duplex_short_edge',
      color_mode: 'monochrome',
      media_width_mm: 210,
      media_height_mm: 297,
      orientation: 'landscape',
    })
    expect(outcome.state).toBe('completed')
    expect(await printer.jobAttributes(outcome.jobId!)).toMatchObject({
      'job-name': 'attributes',
      'job-originating-user-name': 'print-hub',
      'document-format-supplied': 'application/pdf',
      copies: '3',
      sides: 'two-sided-short-edge',
      media: 'iso_a4_210x297mm',
      'print-color-mode': 'monochrome',
      'orientation-requested': 'landscape',
    })
  })

  it('prints over ipps:// too', async () => {
    const outcome = await printIppJob(printer.ippsUri, {
      file: pdf,
      format: 'application/pdf',
      jobName: 'over-tls',
      options: options({ intent: 'invoice' }),
      printer: described,
      tls: { ca: printer.certificate! },
      ...QUICK,
    })
    expect(outcome.state).toBe('completed')
    expect((await printer.jobAttributes(outcome.jobId!)).media).toBe('iso_a4_210x297mm')
  })

  it('reports a job the printer aborts, with its reasons', async () => {
    printer.failJobs(true)
    try {
      const outcome = await print('fails')
      expect(outcome.state).toBe('aborted')
      expect(outcome.reasons.length).toBeGreaterThan(0)
      expect(outcome.reasons).not.toContain('none')
    } finally {
      printer.failJobs(false)
    }
  })

  it('sends the job again while the printer answers server-error-busy', async () => {
    printer.hold()
    try {
      const first = print('first')
      await expect
        .poll(() => readIppHealth(printer.uri, { timeoutMs: 2_000 }).then((h) => h.state))
        .toBe('busy')
      const second = print('second')
      // ippeveprinter logs each answer: the second Print-Job was turned away at least once
      await expect.poll(() => printer.log()).toContain('Print-Job server-error-busy')
      printer.release()
      expect((await first).state).toBe('completed')
      const outcome = await second
      expect(outcome.state).toBe('completed')
      expect(readFileSync(printer.spooledFile(outcome.jobId!)!).equals(pdfBytes)).toBe(true)
    } finally {
      printer.release()
    }
  })

  it('cancels the job when its AbortSignal fires', async () => {
    printer.hold()
    try {
      const abort = new AbortController()
      const printing = print('to-cancel', {}, { signal: abort.signal })
      await expect
        .poll(() => readIppHealth(printer.uri, { timeoutMs: 2_000 }).then((h) => h.state))
        .toBe('busy')
      abort.abort()
      const outcome = await printing
      expect(outcome.state).toBe('canceled')
      expect(outcome.jobId).toEqual(expect.any(Number))
      printer.release()
      await expect
        .poll(() => printer.jobAttributes(outcome.jobId!).then((job) => job['job-state']))
        .toBe('canceled')
    } finally {
      printer.release()
    }
  })

  it('does not send a job whose AbortSignal fired before it started', async () => {
    const outcome = await print('never', {}, { signal: AbortSignal.abort() })
    expect(outcome).toEqual({
      state: 'canceled',
      reasons: [],
      message: 'canceled before the printer accepted the job',
      jobId: null,
    })
  })
})

describe('a printer that cannot be reached', () => {
  it('is offline, and cannot be described or printed on', async () => {
    const uri = `ipp://127.0.0.1:${await freePort()}/ipp/print`
    expect(await readIppHealth(uri, { timeoutMs: 2_000 })).toMatchObject({
      state: 'offline',
      reasons: ['transport_unreachable'],
    })
    const error = await describeIppPrinter(uri, { timeoutMs: 2_000 }).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(IppError)
    expect(ippErrorHealth(error as IppError).state).toBe('offline')
    await expect(
      printIppJob(uri, {
        file: pdf,
        format: 'application/pdf',
        jobName: 'nowhere',
        options: options(),
        printer: described,
        ...QUICK,
      }),
    ).rejects.toMatchObject({ name: 'IppError', kind: 'unreachable', jobId: null })
  })
})
