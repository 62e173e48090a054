import { rm } from 'node:fs/promises'
import type { FailureReason } from '../../protocol/hub-messages.ts'
import type { ResolvedPrintOptions } from '../../protocol/print-job.ts'
import {
  IppError,
  type IppPrinterDescription,
  ippDocumentFormat,
  printIppJob,
  pwgRasterArgs,
} from '../ipp/ipp-printer.ts'
import type { IppPrinterSpec } from '../printers/ipp-printer-uri.ts'
import { RenderError } from '../render/render-error.ts'
import type { Renderer } from '../render/render-worker.ts'

export interface IppPrint {
  /** The downloaded PDF. */
  file: string
  spec: IppPrinterSpec
  printer: IppPrinterDescription
  options: ResolvedPrintOptions
  jobName: string
  renderer: Pick<Renderer, 'convert'>
  /** Ghostscript's time to make PWG raster. */
  deadlineMs: number
  /** From Print-Job until the printer's job ends. */
  timeoutMs: number
  /** Called once, right before Print-Job; false: do not print (cancelled). */
  start(): boolean
}

/** How an IPP job ended; `started` says whether start() was called and said yes. */
export type IppPrintResult =
  | { started: true; outcome: 'printed' }
  | { started: boolean; outcome: 'failed'; reason: FailureReason; detail: string }
  | { started: false; outcome: 'not_started' }

/**
 * Prints a PDF on an IPP printer (docs/pdf-printing.md, "IPP printers"): the PDF itself when the printer
 * takes PDF, else PWG raster made by Ghostscript in the render worker (so a hostile PDF fails only its job);
 * then Print-Job, followed to the printer's own end of the job: `completed` is printed, `aborted` and
 * `canceled` are failed with the printer's reasons. A printer that never accepted the job (unreachable,
 * refused) fails it as such; one that had accepted it and then stopped answering leaves it `interrupted`.
 */
export async function printIpp(job: IppPrint): Promise<IppPrintResult> {
  const format = ippDocumentFormat(job.printer)
  if (format === null)
    return failed(false, 'unsupported_document', 'the printer takes neither PDF nor PWG raster')
  const raster = `${job.file}.pwg`
  try {
    let file = job.file
    if (format === 'image/pwg-raster') {
      try {
        await job.renderer.convert(
          job.file,
          pwgRasterArgs(job.file, raster, job.options, job.printer),
          job.deadlineMs,
        )
      } catch (error) {
        if (error instanceof RenderError)
          return failed(false, 'render_failed', `${error.reason}: ${error.message}`)
        throw error
      }
      file = raster
    }
    if (!job.start()) return { started: false, outcome: 'not_started' }
    try {
      const outcome = await printIppJob(job.spec.ipp.uri, {
        file,
        format,
        jobName: job.jobName,
        options: job.options,
        printer: job.printer,
        timeoutMs: job.timeoutMs,
        ...(job.spec.ipp.ca && { tls: { ca: job.spec.ipp.ca } }),
      })
      if (outcome.state === 'completed') return { started: true, outcome: 'printed' }
      const said = [outcome.message, ...outcome.reasons].filter(Boolean).join('; ')
      return failed(true, 'printer_error', `the printer ${outcome.state} the job${said ? `: ${said}` : ''}`)
    } catch (error) {
      if (!(error instanceof IppError)) throw error
      if (error.jobId !== null)
        return failed(true, 'interrupted', `the printer's job ${error.jobId}: ${error.message}`)
      if (error.kind === 'unreachable' || error.kind === 'timeout')
        return failed(true, 'printer_unreachable', error.message)
      if (error.ippStatus === 'client-error-document-format-not-supported')
        return failed(true, 'unsupported_document', error.message)
      return failed(true, 'printer_error', error.message)
    }
  } finally {
    await rm(raster, { force: true })
  }
}

function failed(started: boolean, reason: FailureReason, detail: string): IppPrintResult {
  return { started, outcome: 'failed', reason, detail }
}
