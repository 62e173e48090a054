import type { Document } from '../../protocol/document.ts'
import type { ResolvedPrintOptions } from '../../protocol/print-job.ts'
import type { Printer } from '../../protocol/printer.ts'
import { ApiError } from '../errors.ts'

function unsupported(reason: string, message: string, details: Record<string, unknown>): ApiError {
  return new ApiError('unsupported_print_route', message, { reason, ...details })
}

/**
 * Spec (print jobs, 409): a printer that cannot take the document's format or raw language, or the requested
 * options, is an unsupported print route; `details.reason` says which.
 */
export function checkPrintRoute(printer: Printer, document: Document, options: ResolvedPrintOptions): void {
  const caps = printer.capabilities
  const base = { printer_id: printer.printer_id, document_id: document.document_id }
  if (!caps.document_formats.includes(document.document_format)) {
    throw unsupported(
      'document_format_not_supported',
      `The printer does not print ${document.document_format}.`,
      {
        ...base,
        supported_formats: caps.document_formats,
      },
    )
  }
  const language = document.document_raw_language
  if (document.document_format === 'raw' && language && !caps.raw_languages.includes(language)) {
    throw unsupported('raw_language_not_supported', `The printer does not speak ${language}.`, {
      ...base,
      supported_raw_languages: caps.raw_languages,
    })
  }
  if (options.dpi !== null && caps.dpi.length > 0 && !caps.dpi.includes(options.dpi)) {
    throw unsupported('dpi_not_supported', `The printer does not print at ${options.dpi} dpi.`, {
      ...base,
      supported_dpi: caps.dpi,
    })
  }
  const width = options.media_width_mm
  if (width !== null && (width < caps.media_width_mm.min || width > caps.media_width_mm.max)) {
    throw unsupported('media_width_not_supported', `The printer does not take media ${width} mm wide.`, {
      ...base,
      media_width_mm: caps.media_width_mm,
    })
  }
  const height = options.media_height_mm
  const heights = caps.media_height_mm
  if (height !== null && heights !== null && (height < heights.min || height > heights.max)) {
    throw unsupported('media_height_not_supported', `The printer does not take media ${height} mm long.`, {
      ...base,
      media_height_mm: heights,
    })
  }
  if (options.color_mode === 'color' && !caps.color) {
    throw unsupported('color_not_supported', 'The printer prints in monochrome only.', base)
  }
  if (options.duplex_mode.startsWith('duplex') && !caps.duplex) {
    throw unsupported('duplex_not_supported', 'The printer cannot print on both sides.', base)
  }
}
