import type { RawLanguage } from '../../protocol/enums.ts'
import type { PrinterCapabilities } from '../../protocol/printer.ts'
import { driverFor } from './index.ts'
import { headDotsOf, LABEL_LENGTH, type MediaDefaults } from './media-defaults.ts'

/** What a printer URI may say about the media (`dpi=`, `width_mm=`, `height_mm=`, `head_dots=`); null: not said. */
export interface MediaOptions {
  dpi: number | null
  /** Widest media it takes (a receipt printer's paper), in mm. */
  widthMm: number | null
  /** Longest label it takes, in mm. */
  heightMm: number | null
  /** Dots its head prints across. */
  headDots: number | null
}

/** The media a printer of `language` takes unless its URI says otherwise (its driver's defaults). */
export function mediaDefaultsFor(language: RawLanguage): MediaDefaults {
  return driverFor(language).mediaDefaults
}

/**
 * Capabilities of a raster printer from its language and the URI's media options. It takes RAW payloads in
 * its language and PDFs, which the hub renders (docs/pdf-printing.md). A stated maximum also lowers the
 * minimum when it is narrower than the default range. The default media is the roll (receipt printers) or
 * the label the URI states with both width_mm= and height_mm=, else the language's usual label within the
 * stated ranges.
 */
export function capabilitiesFor(language: RawLanguage, media: MediaOptions): PrinterCapabilities {
  const defaults = mediaDefaultsFor(language)
  const range = (stated: number | null, fallback: { min: number; max: number }) =>
    stated === null ? { ...fallback } : { min: Math.min(fallback.min, stated), max: stated }
  const width = range(media.widthMm, defaults.width)
  const height =
    media.heightMm === null
      ? defaults.height && { ...defaults.height }
      : range(media.heightMm, defaults.height ?? LABEL_LENGTH)
  const dpi = media.dpi ?? defaults.dpi
  return {
    document_formats: ['raw', 'pdf'],
    raw_languages: [language],
    dpi: [dpi],
    default_dpi: dpi,
    media_width_mm: width,
    media_height_mm: height,
    default_media:
      height === null
        ? { width_mm: width.max, height_mm: null }
        : defaultLabel(media, defaults, width, height),
    color: false,
    duplex: false,
  }
}

/** Dots the head prints across: the URI's head_dots=, else what the language's printers print on its paper. */
export function headDotsFor(language: RawLanguage, media: MediaOptions): number {
  if (media.headDots !== null) return media.headDots
  const defaults = mediaDefaultsFor(language)
  const paper = media.widthMm ?? defaults.width.max
  return headDotsOf(defaults.printableWidthMm(paper), media.dpi ?? defaults.dpi)
}

type Range = { min: number; max: number }

function defaultLabel(media: MediaOptions, defaults: MediaDefaults, width: Range, height: Range) {
  if (media.widthMm !== null && media.heightMm !== null)
    return { width_mm: media.widthMm, height_mm: media.heightMm }
  return {
    width_mm: Math.min(defaults.label?.width ?? width.max, width.max),
    height_mm: Math.min(defaults.label?.height ?? height.max, height.max),
  }
}
