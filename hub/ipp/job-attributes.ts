import type { ResolvedPrintOptions } from '../../protocol/print-job.ts'
import { keywordForSize, type MediaSizeMm, rangeHolds } from './media-size.ts'
import type { IppPrinterDescription } from './printer-description.ts'

/** RFC 8011 §5.2.8 sides; `default` leaves it to the printer. */
const SIDES: Record<ResolvedPrintOptions['duplex_mode'], string | null> = {
  default: null,
  simplex: 'one-sided',
  duplex_long_edge: 'two-sided-long-edge',
  duplex_short_edge: 'two-sided-short-edge',
}

/** PWG 5100.13 §6.2.3 print-color-mode; `default` leaves it to the printer. */
const PRINT_COLOR_MODE: Record<ResolvedPrintOptions['color_mode'], string | null> = {
  default: null,
  color: 'color',
  monochrome: 'monochrome',
}

/** RFC 8011 §5.2.10 orientation-requested enum values: 3 portrait, 4 landscape. */
const ORIENTATION_REQUESTED: Record<ResolvedPrintOptions['orientation'], number | null> = {
  default: null,
  portrait: 3,
  landscape: 4,
}

/** PWG 5100.13 §6.2.5 print-scaling. */
const PRINT_SCALING: Record<ResolvedPrintOptions['scale_mode'], string> = {
  fit: 'fit',
  none: 'none',
}

/** Intents printed on A4 when the job gives no media size (docs/pdf-printing.md, media by intent). */
const A4_INTENTS: readonly ResolvedPrintOptions['intent'][] = ['a4_document', 'invoice', 'packing_slip']
const A4: MediaSizeMm = { widthMm: 210, heightMm: 297 }

/** The media a job asks for: its own size, else its intent's; null leaves the media to the printer. */
export function requestedMedia(options: ResolvedPrintOptions): MediaSizeMm | null {
  if (options.media_width_mm !== null && options.media_height_mm !== null)
    return { widthMm: options.media_width_mm, heightMm: options.media_height_mm }
  return A4_INTENTS.includes(options.intent) ? A4 : null
}

/**
 * The IPP Job Template attributes for a job's options. Each is sent only when the printer's matching
 * "*-supported" attribute lists the value; otherwise it is left out and the printer's default applies
 * (a printer may refuse a whole job over one value it does not support).
 */
export function ippJobAttributes(
  options: ResolvedPrintOptions,
  printer: IppPrinterDescription,
): Record<string, unknown> {
  const supported = printer.jobTemplate
  const attributes: Record<string, unknown> = {}
  // RFC 8011 §5.2.5 copies, within copies-supported (rangeOfInteger).
  if (supported.copies && options.copies >= supported.copies.min && options.copies <= supported.copies.max)
    attributes.copies = options.copies
  const sides = SIDES[options.duplex_mode]
  if (sides !== null && supported.sides.includes(sides)) attributes.sides = sides
  const colorMode = PRINT_COLOR_MODE[options.color_mode]
  if (colorMode !== null && supported.printColorModes.includes(colorMode))
    attributes['print-color-mode'] = colorMode
  Object.assign(attributes, mediaAttributes(requestedMedia(options), printer))
  const orientation = ORIENTATION_REQUESTED[options.orientation]
  if (orientation !== null && supported.orientations.includes(orientation))
    attributes['orientation-requested'] = orientation
  const scaling = PRINT_SCALING[options.scale_mode]
  if (supported.printScalings.includes(scaling)) attributes['print-scaling'] = scaling
  return attributes
}

/**
 * `media` (RFC 8011 §5.2.11) when a media-supported keyword names the size (iso_a4_210x297mm,
 * na_letter_8.5x11in); else `media-col` with just its media-size (PWG 5100.7: x-dimension and
 * y-dimension in hundredths of a millimetre) when the printer takes media-size in media-col and states a
 * size or custom range that holds it; else nothing.
 */
function mediaAttributes(size: MediaSizeMm | null, printer: IppPrinterDescription): Record<string, unknown> {
  if (size === null) return {}
  const keyword = keywordForSize(printer.mediaSupported, size)
  if (keyword !== null) return { media: keyword }
  const { mediaColMembers, mediaSizes } = printer.jobTemplate
  if (!mediaColMembers.includes('media-size') || !mediaSizes.some((range) => rangeHolds(range, size)))
    return {}
  return {
    'media-col': {
      'media-size': {
        'x-dimension': Math.round(size.widthMm * 100),
        'y-dimension': Math.round(size.heightMm * 100),
      },
    },
  }
}
