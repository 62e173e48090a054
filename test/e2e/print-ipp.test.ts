import { readdirSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import type { Printer } from '../../protocol/printer.ts'
import { type IppEvePrinter, startIppEvePrinter } from '../helpers/ipp-printer.ts'
import { makePdf } from '../helpers/pdf.ts'
import { ApiClient } from './api-client.ts'
import { setUpAccount, startCloudProcess, startHubProcess, stopAll } from './harness.ts'

const JOB_TIMEOUT_MS = 20_000

/** The file a job left in ippeveprinter's spool directory (`<job-id>-<job-name>.<ext>`; job-name is the job's id). */
function landed(printer: IppEvePrinter, printJobId: string): { file: string; jobId: number } {
  const name = readdirSync(printer.spoolDir).find(
    (file) => file.includes(printJobId) && !file.endsWith('.prn'),
  )
  if (!name) throw new Error(`no file for ${printJobId} in ${printer.spoolDir}`)
  return { file: path.join(printer.spoolDir, name), jobId: Number(name.split('-')[0]) }
}

describe('PDFs on IPP printers, end to end (real cloud, hub and ippeveprinter)', () => {
  let office: IppEvePrinter
  let rasterOnly: IppEvePrinter
  let api: ApiClient
  const printers: Record<'office' | 'rasterOnly', Printer> = {} as never

  beforeAll(async () => {
    office = await startIppEvePrinter({
      formats: ['application/pdf', 'image/pwg-raster'],
      color: true,
      duplex: true,
    })
    rasterOnly = await startIppEvePrinter({ formats: ['image/pwg-raster'] })
    const cloud = await startCloudProcess()
    const account = await setUpAccount(cloud)
    api = new ApiClient(cloud.url, account.accessToken)
    await startHubProcess({
      cloudUrl: cloud.url,
      enroll: account.enrollmentToken,
      printers: [`${office.uri}?name=Office`, `${rasterOnly.uri}?name=Raster%20only`],
    })
    await api.waitForPrinters(2)
    // Capabilities arrive once the hub has described each printer (an undescribed one reports no dpi).
    // vi.waitFor: expect.poll is for tests, not hooks.
    const described = await vi.waitFor(
      async () => {
        const found = (await api.printers()).filter((p) => p.capabilities.dpi.length > 0)
        if (found.length < 2) throw new Error(`${found.length} of 2 printers described`)
        return found
      },
      { timeout: JOB_TIMEOUT_MS, interval: 50 },
    )
    for (const printer of described) {
      if (printer.name === 'Office') printers.office = printer
      if (printer.name === 'Raster only') printers.rasterOnly = printer
    }
  }, 60_000)

  afterAll(async () => {
    await stopAll()
    await office?.stop()
    await rasterOnly?.stop()
  })

  it('lists each printer with what Get-Printer-Attributes says it can do, and no raw language', () => {
    expect(printers.office).toMatchObject({
      online: true,
      languages: [],
      health: { state: 'ready' },
      capabilities: { document_formats: ['pdf'], raw_languages: [], color: true, duplex: true },
    })
    expect(printers.rasterOnly).toMatchObject({
      languages: [],
      capabilities: { document_formats: ['pdf'], color: false, duplex: false, dpi: [300, 600] },
    })
  })

  it('sends the PDF itself to a printer that takes PDF, with copies, sides and colour as IPP job attributes', async () => {
    const pdf = makePdf(2, 'Invoice 2026-118')
    const job = await api.printPdf(printers.office.printer_id, pdf, {
      copies: 2,
      duplex_mode: 'duplex_long_edge',
      color_mode: 'color',
      intent: 'invoice',
    })
    const done = await api.waitForJob(job.print_job_id, ['printed', 'failed'], JOB_TIMEOUT_MS)
    expect([done.status, done.failure_reason]).toEqual(['printed', null])
    const { file, jobId } = landed(office, job.print_job_id)
    expect(readFileSync(file).equals(pdf)).toBe(true)
    expect(await office.jobAttributes(jobId)).toMatchObject({
      copies: '2',
      sides: 'two-sided-long-edge',
      'print-color-mode': 'color',
      'job-state': 'completed',
    })
  })

  it('sends PWG raster made by Ghostscript to a printer that takes no PDF', async () => {
    const job = await api.printPdf(printers.rasterOnly.printer_id, makePdf(1, 'Packing slip'), {
      intent: 'packing_slip',
    })
    const done = await api.waitForJob(job.print_job_id, ['printed', 'failed'], JOB_TIMEOUT_MS)
    expect([done.status, done.failure_reason]).toEqual(['printed', null])
    const { file } = landed(rasterOnly, job.print_job_id)
    // PWG 5102.4 §4.3: a PWG raster stream starts with the sync word "RaS2".
    expect(readFileSync(file).subarray(0, 4).toString('latin1')).toBe('RaS2')
  })

  it('fails a job the printer aborts with printer_error and the printer’s own words', async () => {
    office.failJobs(true)
    try {
      const job = await api.printPdf(printers.office.printer_id, makePdf(1, 'Doomed'))
      const done = await api.waitForJob(job.print_job_id, ['printed', 'failed'], JOB_TIMEOUT_MS)
      expect(done).toMatchObject({
        status: 'failed',
        failure_reason: 'printer_error',
        failure_detail: expect.stringMatching(/^the printer aborted the job/),
      })
    } finally {
      office.failJobs(false)
    }
  })

  it('refuses what an IPP printer cannot do at creation: RAW payloads (409) and colour on a monochrome one (422)', async () => {
    const raw = await api.request<{ error_code: string; details: { reason: string } }>(
      'POST',
      '/api/v1/print-jobs/from-base64',
      {
        printer_id: printers.office.printer_id,
        document_base64: Buffer.from('^XA^XZ').toString('base64'),
        document_format: 'raw',
        document_raw_language: 'zpl',
      },
    )
    expect([raw.status, raw.body.error_code, raw.body.details.reason]).toEqual([
      409,
      'unsupported_print_route',
      'document_format_not_supported',
    ])
    const colour = await api.request<{ error_code: string; details: { fields: { field: string }[] } }>(
      'POST',
      '/api/v1/print-jobs/from-base64',
      {
        printer_id: printers.rasterOnly.printer_id,
        document_base64: makePdf(1).toString('base64'),
        document_format: 'pdf',
        color_mode: 'color',
      },
    )
    expect([colour.status, colour.body.error_code, colour.body.details.fields.map((f) => f.field)]).toEqual([
      422,
      'validation_failed',
      ['color_mode'],
    ])
  })
})
