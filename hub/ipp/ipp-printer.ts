/**
 * Printing on IPP printers (`ipp://`, `ipps://`; docs/pdf-printing.md): what a printer is and can do, its
 * health, the job attributes for a job's options, Print-Job followed to its end, and the Ghostscript
 * arguments that make PWG raster for a printer that does not take PDF. Messages are encoded and decoded by
 * the `ipp` package.
 */

import type { IppPrinterDescription } from './printer-description.ts'
import { PDF, PWG_RASTER } from './printer-description.ts'

export { describeIppPrinter, type IppQueryOptions, readIppHealth } from './describe-printer.ts'
export { IppError, type IppErrorKind } from './ipp-error.ts'
export type { IppHttpOptions } from './ipp-http.ts'
export { IPP_PORT, type IppEndpoint, IppUriError, parseIppUri } from './ipp-uri.ts'
export { ippJobAttributes } from './job-attributes.ts'
export type { MediaSizeRange } from './media-size.ts'
export { type IppJobOutcome, type IppPrintRequest, printIppJob } from './print-job.ts'
export type { IppJobTemplateSupport, IppPrinterDescription } from './printer-description.ts'
export { ippErrorHealth } from './printer-health.ts'
export { pwgRasterArgs } from './pwg-raster-args.ts'

/** The format to send this printer: the PDF itself when it takes PDF, else PWG raster; null for neither. */
export function ippDocumentFormat(
  printer: IppPrinterDescription,
): 'application/pdf' | 'image/pwg-raster' | null {
  if (printer.takesPdf) return PDF
  if (printer.takesPwgRaster) return PWG_RASTER
  return null
}
