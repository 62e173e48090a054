import type { Document } from '../protocol/document.ts'
import {
  PRINT_OPTION_DEFAULTS,
  type PrintOptions,
  printOptionsOf,
  RENDERING_OPTION_KEYS,
  type ResolvedPrintOptions,
} from '../protocol/print-job.ts'
import type { Printer } from '../protocol/printer.ts'
import { ApiError } from './api-error.ts'

function unsupported(reason: string, message: string, details: Record<string, unknown>): ApiError {
  return new ApiError('unsupported_print_route', message, { reason, ...details })
}

interface OptionError {
  field: keyof ResolvedPrintOptions
  message: string
  location: 'body'
}

const range = (mm: { min: number; max: number }) => `${mm.min} to ${mm.max} mm`

/**
 * Options against what the printer can do (issue 8, point 6), named in the order of the options. Null and
 * `default` always pass: they leave the choice to the printer. The options that only shape rendering
 * (RENDERING_OPTION_KEYS: media and dpi among them) are not checked for a RAW payload, which goes to the
 * printer as it is; colour and duplex are, since only the printer could do them.
 */
function optionErrors(printer: Printer, document: Document, options: ResolvedPrintOptions): OptionError[] {
  const caps = printer.capabilities
  const errors: OptionError[] = []
  const refuse = (field: OptionError['field'], message: string) =>
    errors.push({ field, message, location: 'body' })
  if (options.color_mode === 'color' && !caps.color)
    refuse('color_mode', 'the printer prints in monochrome only')
  if (options.duplex_mode.startsWith('duplex') && !caps.duplex)
    refuse('duplex_mode', 'the printer prints on one side only')
  const width = options.media_width_mm
  if (width !== null && (width < caps.media_width_mm.min || width > caps.media_width_mm.max))
    refuse('media_width_mm', `is outside the media widths the printer takes (${range(caps.media_width_mm)})`)
  const height = options.media_height_mm
  const heights = caps.media_height_mm
  if (height !== null && heights !== null && (height < heights.min || height > heights.max))
    refuse('media_height_mm', `is outside the media lengths the printer takes (${range(heights)})`)
  if (options.dpi !== null && caps.dpi.length > 0 && !caps.dpi.includes(options.dpi))
    refuse('dpi', `is not a resolution the printer prints at (${caps.dpi.join(', ')})`)
  if (document.document_format !== 'raw') return errors
  const ignored: readonly string[] = RENDERING_OPTION_KEYS
  return errors.filter((error) => !ignored.includes(error.field))
}

/**
 * The checks a job's printer makes, in the documented order (docs/printing-api.md, "order of checks"): first the options
 * it cannot do, as fields (422 `validation_failed`, details.fields naming each); then a format or raw
 * language it cannot take, an unsupported print route (spec: print jobs, 409, `details.reason` says which).
 */
export function checkPrintRoute(printer: Printer, document: Document, options: ResolvedPrintOptions): void {
  const fields = optionErrors(printer, document, options)
  if (fields.length > 0) {
    const names = fields.map((f) => f.field)
    throw new ApiError('validation_failed', `Invalid ${names.join(', ')}.`, { fields })
  }
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
}

/** The options a job is made with: those asked, and the defaults of the others. */
export function resolveOptions(options: PrintOptions): ResolvedPrintOptions {
  return { ...PRINT_OPTION_DEFAULTS, ...printOptionsOf(options) }
}
