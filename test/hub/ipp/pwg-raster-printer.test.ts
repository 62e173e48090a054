import { execFile } from 'node:child_process'
import { readFileSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  describeIppPrinter,
  type IppPrinterDescription,
  ippDocumentFormat,
  printIppJob,
  pwgRasterArgs,
} from '../../../hub/ipp/ipp-printer.ts'
import { PRINT_OPTION_DEFAULTS, type ResolvedPrintOptions } from '../../../protocol/print-job.ts'
import { type IppEvePrinter, startIppEvePrinter } from '../../helpers/ipp-printer.ts'
import { makePdf } from '../../helpers/pdf.ts'
import { tempDir } from '../../helpers/temp-dir.ts'

const run = promisify(execFile)

// A monochrome, one-sided printer that takes PWG raster and nothing else.
let printer: IppEvePrinter
let described: IppPrinterDescription
const files = tempDir('print-hub-pwg-test-')
const pdf = path.join(files.path, 'page.pdf')

beforeAll(async () => {
  writeFileSync(pdf, makePdf(1, 'PWG raster'))
  printer = await startIppEvePrinter({ formats: ['image/pwg-raster'] })
  described = await describeIppPrinter(printer.uri, { timeoutMs: 5_000 })
})
afterAll(async () => {
  await printer?.stop()
  files.remove()
})

/** PWG 5102.4 §4.3: the page header follows the sync word "RaS2"; offsets below are from the header. */
function pageHeader(raster: Buffer) {
  const header = raster.subarray(4)
  return {
    hwResolution: [header.readUInt32BE(276), header.readUInt32BE(280)],
    pageSizePoints: [header.readUInt32BE(352), header.readUInt32BE(356)],
    bitsPerPixel: header.readUInt32BE(388),
    colorSpace: header.readUInt32BE(400),
  }
}

describe('a printer that takes PWG raster only', () => {
  it('is described as printing PDF, which the hub rasterises at its best resolution', () => {
    expect(ippDocumentFormat(described)).toBe('image/pwg-raster')
    expect(described).toMatchObject({
      takesPdf: false,
      takesPwgRaster: true,
      pwgRasterResolutions: [300, 600],
    })
    expect(described.capabilities).toMatchObject({
      document_formats: ['pdf'],
      dpi: [300, 600],
      default_dpi: 600,
      color: false,
      duplex: false,
    })
  })

  it('prints PWG raster that Ghostscript made with pwgRasterArgs', async () => {
    const options: ResolvedPrintOptions = { ...PRINT_OPTION_DEFAULTS, intent: 'invoice', dpi: 300 }
    const raster = path.join(files.path, 'page.pwg')
    const [command, ...args] = pwgRasterArgs(pdf, raster, options, described)
    await run(command!, args)

    const outcome = await printIppJob(printer.uri, {
      file: raster,
      format: 'image/pwg-raster',
      jobName: 'raster',
      options,
      printer: described,
      pollMs: 20,
      timeoutMs: 20_000,
    })
    expect(outcome.state).toBe('completed')

    const landed = readFileSync(printer.spooledFile(outcome.jobId!)!)
    expect(landed.equals(readFileSync(raster))).toBe(true)
    expect(landed.subarray(0, 4).toString('latin1')).toBe('RaS2')
    // 300 dpi as asked, A4 (595 × 842 pt) for an invoice, 8-bit sGray (18) for a monochrome printer
    expect(pageHeader(landed)).toEqual({
      hwResolution: [300, 300],
      pageSizePoints: [595, 842],
      bitsPerPixel: 8,
      colorSpace: 18,
    })
    expect((await printer.jobAttributes(outcome.jobId!)).media).toBe('iso_a4_210x297mm')
  })
})
