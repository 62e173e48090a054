import type { PrinterCapabilities } from '../../protocol/printer.ts'
import type { MediaSizeMm, MmRange } from './media-size.ts'
import type { IppPrinterDescription } from './printer-description.ts'

/** The resolutions PrinterCapabilities can state (protocol/printer.ts), and how many. */
const MIN_DPI = 72
const MAX_DPI = 2400
const MAX_DPI_VALUES = 16
/** A printer that states no media sizes takes whatever the API allows (print options: 1 to 2000 mm). */
const ANY_MEDIA: MmRange = { min: 1, max: 2000 }

/** Attributes capabilities need beyond the description's own fields. */
export interface CapabilityAttributes {
  /** printer-resolution-supported in dpi (RFC 8011 §5.2.12). */
  printerResolutions: number[]
  printerResolutionDefault: number | null
  /** color-supported (a Printer Description attribute, RFC 8011 §5.4). */
  colorSupported: boolean
  defaultMedia: MediaSizeMm | null
}

/**
 * What the cloud checks jobs against. PDF is the one format: the hub sends it as it is to a printer that
 * takes application/pdf, and makes PWG raster of it for one that takes image/pwg-raster only.
 */
export function ippCapabilities(
  printer: Omit<IppPrinterDescription, 'capabilities'>,
  attributes: CapabilityAttributes,
): PrinterCapabilities {
  const dpi = [...new Set([...attributes.printerResolutions, ...printer.pwgRasterResolutions])]
    .filter((value) => value >= MIN_DPI && value <= MAX_DPI)
    .sort((a, b) => a - b)
    .slice(0, MAX_DPI_VALUES)
  const sizes = printer.jobTemplate.mediaSizes
  const span = (ranges: MmRange[]): MmRange =>
    ranges.length === 0
      ? { ...ANY_MEDIA }
      : { min: Math.min(...ranges.map((r) => r.min)), max: Math.max(...ranges.map((r) => r.max)) }
  const defaultMedia = attributes.defaultMedia
  return {
    document_formats: printer.takesPdf || printer.takesPwgRaster ? ['pdf'] : [],
    raw_languages: [],
    dpi,
    default_dpi: defaultDpi(printer, attributes, dpi),
    media_width_mm: span(sizes.map((size) => size.width)),
    media_height_mm: span(sizes.map((size) => size.height)),
    default_media: defaultMedia && { width_mm: defaultMedia.widthMm, height_mm: defaultMedia.heightMm },
    color: attributes.colorSupported || printer.jobTemplate.printColorModes.includes('color'),
    duplex: printer.jobTemplate.sides.some((sides) => sides.startsWith('two-sided-')),
  }
}

/**
 * The resolution a job without `dpi` prints at: the printer's own default when it gets the PDF, the best
 * PWG raster resolution when the hub rasterises for it (as pwgRasterArgs does).
 */
function defaultDpi(
  printer: Omit<IppPrinterDescription, 'capabilities'>,
  attributes: CapabilityAttributes,
  dpi: number[],
): number | null {
  const chosen = printer.takesPdf
    ? attributes.printerResolutionDefault
    : printer.pwgRasterResolutions.length > 0
      ? Math.max(...printer.pwgRasterResolutions)
      : null
  return chosen !== null && dpi.includes(chosen) ? chosen : null
}
