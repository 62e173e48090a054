import { setTimeout as sleep } from 'node:timers/promises'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type Bitmap, bytesPerRow } from '../../hub/languages/bitmap.ts'
import type { PagePrint } from '../../hub/languages/raster-job.ts'
import type { RawLanguage } from '../../protocol/enums.ts'
import type { PrintJob } from '../../protocol/print-job.ts'
import { decodeCpclRaster } from '../simulators/decoders/cpcl-raster.ts'
import { decodeEscposRaster } from '../simulators/decoders/escpos-raster.ts'
import { decodeTsplRaster } from '../simulators/decoders/tspl-raster.ts'
import { decodeZplRaster } from '../simulators/decoders/zpl-raster.ts'
import { type PrinterSimulator, startPrinterSimulator } from '../simulators/printer-simulator.ts'
import { ApiClient } from './api-client.ts'
import { type HubProcess, setUpAccount, startCloudProcess, startHubProcess, stopAll } from './harness.ts'
import {
  hostilePdf,
  LABEL_MEDIA,
  overlongPagePdf,
  RECEIPT_HEIGHT_DOTS,
  RECEIPT_WIDTH_DOTS,
  receiptPdf,
  shippingLabelPdf,
  threePageLabelPdf,
} from './pdf-fixtures.ts'
import { compareBitmaps, describeComparison, ghostscriptPages } from './raster-compare.ts'

// PDF jobs through a real cloud, a real hub and four printer simulators over TCP (docs/pdf-printing.md).
// Every fixture page is solid black shapes sized to print 1:1 at 203 dpi, so what the printer receives,
// decoded back into pages, must match Ghostscript's own 203 dpi raster of the PDF (overlap ≥ 0.99; the
// comparison and the fixtures are proven in raster-compare.test.ts).

const JOB_TIMEOUT_MS = 45_000
const TEST_TIMEOUT_MS = 90_000
const MIN_OVERLAP = 0.99

/** The pages a printer's bytes hold, decoded with its language's raster decoder (ESC/POS: quantity 1). */
function decodePages(language: RawLanguage, bytes: Buffer): PagePrint[] {
  switch (language) {
    case 'zpl':
      return decodeZplRaster(bytes)
    case 'tspl':
      return decodeTsplRaster(bytes)
    case 'cpcl':
      return decodeCpclRaster(bytes)
    case 'escpos':
      return decodeEscposRaster(bytes).map((page) => ({ page, quantity: 1 }))
  }
}

/** What the simulator received once bytes stop arriving (the job is reported printed after its last write). */
async function settledBytes(simulator: PrinterSimulator, quietMs = 300): Promise<Buffer> {
  let length = -1
  for (let round = 0; round < 50; round++) {
    const now = simulator.received().length
    if (now === length) break
    length = now
    await sleep(quietMs)
  }
  return simulator.received()
}

function expectSamePage(printed: Bitmap, reference: Bitmap, what: string): void {
  const { overlap } = compareBitmaps(printed, reference)
  expect(overlap, `${what}: ${describeComparison(printed, reference)}`).toBeGreaterThanOrEqual(MIN_OVERLAP)
}

function expectPrinted(job: PrintJob): void {
  expect({ status: job.status, failure_reason: job.failure_reason }).toEqual({
    status: 'printed',
    failure_reason: null,
  })
}

describe('PDF jobs, end to end through real processes', () => {
  let hub: HubProcess
  let api: ApiClient
  const simulators = {} as Record<RawLanguage, PrinterSimulator>
  const printerIds = {} as Record<RawLanguage, string>
  const reference = {} as { label: Bitmap; receipt: Bitmap; threePages: Bitmap[] }

  beforeAll(async () => {
    ;[reference.label] = (await ghostscriptPages(shippingLabelPdf())) as [Bitmap]
    ;[reference.receipt] = (await ghostscriptPages(receiptPdf())) as [Bitmap]
    reference.threePages = await ghostscriptPages(threePageLabelPdf())
    const cloud = await startCloudProcess()
    const account = await setUpAccount(cloud)
    api = new ApiClient(cloud.url, account.accessToken)
    for (const language of ['escpos', 'zpl', 'tspl', 'cpcl'] as const) {
      simulators[language] = await startPrinterSimulator({ language })
    }
    hub = await startHubProcess({
      cloudUrl: cloud.url,
      enroll: account.enrollmentToken,
      printers: (Object.keys(simulators) as RawLanguage[]).map(
        (l) => `${simulators[l].uri}&name=${encodeURIComponent(`Sim ${l}`)}`,
      ),
    })
    const printers = await api.waitForPrinters(4)
    for (const printer of printers) printerIds[printer.languages[0] as RawLanguage] = printer.printer_id
  }, TEST_TIMEOUT_MS)
  afterAll(async () => {
    await stopAll()
    for (const simulator of Object.values(simulators)) await simulator?.close()
  })

  /** Prints the 4 × 6 label 1:1 on `language` and checks the one page the printer received. */
  async function printLabelAndCheck(language: 'zpl' | 'tspl' | 'cpcl'): Promise<void> {
    const simulator = simulators[language]
    simulator.clear()
    const job = await api.printPdf(printerIds[language], shippingLabelPdf(), { ...LABEL_MEDIA })
    expectPrinted(await api.waitForJob(job.print_job_id, ['printed', 'failed', 'cancelled'], JOB_TIMEOUT_MS))
    const pages = decodePages(language, await settledBytes(simulator))
    expect(pages.map((p) => p.quantity)).toEqual([1])
    const [{ page }] = pages as [PagePrint]
    // the image is min(media, head) = 812 dots wide (decoders give whole bytes) and as long as the media
    expect({ widthBytes: bytesPerRow(page.width), height: page.height }).toEqual({
      widthBytes: bytesPerRow(reference.label.width),
      height: reference.label.height,
    })
    expectSamePage(page, reference.label, `${language} label`)
  }

  it('lists pdf among the document formats of every printer', async () => {
    const printers = await api.printers()
    expect(printers).toHaveLength(4)
    for (const printer of printers)
      expect(printer.capabilities.document_formats, printer.name).toEqual(
        expect.arrayContaining(['raw', 'pdf']),
      )
  })

  it.each(['zpl', 'tspl', 'cpcl'] as const)(
    'prints the 4 × 6 in label on %s as Ghostscript renders it at 203 dpi',
    async (language) => printLabelAndCheck(language),
    TEST_TIMEOUT_MS,
  )

  it(
    'prints the receipt on the 80 mm ESC/POS roll: 576 dots wide, as Ghostscript renders it',
    async () => {
      const simulator = simulators.escpos
      simulator.clear()
      const job = await api.printPdf(printerIds.escpos, receiptPdf())
      expectPrinted(
        await api.waitForJob(job.print_job_id, ['printed', 'failed', 'cancelled'], JOB_TIMEOUT_MS),
      )
      const pages = decodePages('escpos', await settledBytes(simulator))
      expect(pages).toHaveLength(1)
      const { page } = pages[0]!
      // continuous media: as wide as the head, as long as the content (no margins asked)
      expect({ width: page.width, height: page.height }).toEqual({
        width: RECEIPT_WIDTH_DOTS,
        height: RECEIPT_HEIGHT_DOTS,
      })
      expectSamePage(page, reference.receipt, 'receipt')
    },
    TEST_TIMEOUT_MS,
  )

  it(
    'prints 2 copies of a 3-page label collated, 1 2 3 1 2 3, each page as Ghostscript renders it (ZPL)',
    async () => {
      const simulator = simulators.zpl
      simulator.clear()
      const job = await api.printPdf(printerIds.zpl, threePageLabelPdf(), { ...LABEL_MEDIA, copies: 2 })
      expectPrinted(
        await api.waitForJob(job.print_job_id, ['printed', 'failed', 'cancelled'], JOB_TIMEOUT_MS),
      )
      const pages = decodePages('zpl', await settledBytes(simulator))
      expect(pages.map((p) => p.quantity)).toEqual([1, 1, 1, 1, 1, 1])
      // the three pages overlap each other by less than 0.8 (raster-compare.test.ts), so a match is the order
      pages.forEach(({ page }, i) => {
        expectSamePage(page, reference.threePages[i % 3]!, `label ${i + 1} (page ${(i % 3) + 1})`)
      })
    },
    TEST_TIMEOUT_MS,
  )

  it(
    'prints 3 copies of a 1-page label as one label with quantity 3 (ZPL ^PQ3)',
    async () => {
      const simulator = simulators.zpl
      simulator.clear()
      const job = await api.printPdf(printerIds.zpl, shippingLabelPdf(), { ...LABEL_MEDIA, copies: 3 })
      expectPrinted(
        await api.waitForJob(job.print_job_id, ['printed', 'failed', 'cancelled'], JOB_TIMEOUT_MS),
      )
      const pages = decodePages('zpl', await settledBytes(simulator))
      expect(pages.map((p) => p.quantity)).toEqual([3])
      expectSamePage(pages[0]!.page, reference.label, 'label')
    },
    TEST_TIMEOUT_MS,
  )

  it(
    'refuses the hostile PDF (%PDF-1.4 and garbage) before it becomes a job; nothing reaches the printer and the next label prints',
    async () => {
      // The cloud inspects every PDF with Ghostscript when it is submitted (docs/printing-api.md: document inspection), so
      // this file is refused there and never reaches a hub; see the overlong page below for the hub's own
      // render_failed.
      const simulator = simulators.zpl
      simulator.clear()
      const jobsBefore = (await api.allJobs()).length
      const res = await api.request<{ error_code: string }>('POST', '/api/v1/print-jobs/from-base64', {
        printer_id: printerIds.zpl,
        document_base64: hostilePdf().toString('base64'),
        document_format: 'pdf',
        ...LABEL_MEDIA,
      })
      expect({ status: res.status, error_code: res.body.error_code }).toEqual({
        status: 422,
        error_code: 'pdf_invalid',
      })
      expect((await api.allJobs()).length).toBe(jobsBefore)
      expect((await settledBytes(simulator)).length).toBe(0)
      await printLabelAndCheck('zpl')
    },
    TEST_TIMEOUT_MS,
  )

  it(
    'fails a PDF the hub cannot render (a 2100 mm page) with render_failed, sends nothing for it, and prints the next label',
    async () => {
      const simulator = simulators.zpl
      simulator.clear()
      const job = await api.printPdf(printerIds.zpl, overlongPagePdf())
      const done = await api.waitForJob(job.print_job_id, ['printed', 'failed', 'cancelled'], JOB_TIMEOUT_MS)
      expect({
        status: done.status,
        failure_reason: done.failure_reason,
        failure_detail: done.failure_detail,
      }).toEqual({
        status: 'failed',
        failure_reason: 'render_failed',
        failure_detail: expect.stringMatching(/^page_too_big: Page 1 is 799 × 16783 dots/),
      })
      expect((await settledBytes(simulator)).length, 'bytes sent for the failed job').toBe(0)
      expect(hub.process.exitCode).toBeNull()
      expect(hub.process.signalCode).toBeNull()
      await printLabelAndCheck('zpl')
    },
    TEST_TIMEOUT_MS,
  )
})
