import type { RawLanguage } from '../../protocol/enums.ts'
import type { PrinterCapabilities } from '../../protocol/printer.ts'

/** What a printer URI may say about the media (`dpi=`, `width_mm=`, `height_mm=`); null: not said. */
export interface MediaOptions {
  dpi: number | null
  /** Widest media it takes, in mm. */
  widthMm: number | null
  /** Longest label it takes, in mm. */
  heightMm: number | null
}

export interface MediaDefaults {
  dpi: number
  width: { min: number; max: number }
  /** null: continuous media (a receipt roll). */
  height: { min: number; max: number } | null
}

/**
 * ESC/POS receipt printers: 203 dpi (8 dots/mm) heads on 58 mm or 80 mm rolls, continuous media. The
 * common case (Epson TM-T20/T88 class); pass dpi= or width_mm= for others.
 */
export const RECEIPT_DEFAULTS: MediaDefaults = { dpi: 203, width: { min: 58, max: 80 }, height: null }

/**
 * ZPL, TSPL and CPCL label printers: 203 dpi desktop models taking 25 to 104 mm (4 inch) wide labels. The
 * length range is deliberately generous; pass height_mm= to state the longest label the printer takes.
 */
const LABEL_LENGTH = { min: 10, max: 1000 }
export const LABEL_DEFAULTS: MediaDefaults = { dpi: 203, width: { min: 25, max: 104 }, height: LABEL_LENGTH }

export function mediaDefaultsFor(language: RawLanguage): MediaDefaults {
  return language === 'escpos' ? RECEIPT_DEFAULTS : LABEL_DEFAULTS
}

/**
 * Capabilities of a raw printer from its language and the URI's media options. Only raw documents for now:
 * `pdf` joins `document_formats` once the hub rasterises PDF (DESIGN: PDF is rendered by the hub).
 * A stated maximum also lowers the minimum when it is narrower than the default range.
 */
export function capabilitiesFor(language: RawLanguage, media: MediaOptions): PrinterCapabilities {
  const defaults = mediaDefaultsFor(language)
  const range = (stated: number | null, fallback: { min: number; max: number }) =>
    stated === null ? { ...fallback } : { min: Math.min(fallback.min, stated), max: stated }
  return {
    document_formats: ['raw'],
    raw_languages: [language],
    dpi: [media.dpi ?? defaults.dpi],
    media_width_mm: range(media.widthMm, defaults.width),
    media_height_mm:
      media.heightMm === null
        ? defaults.height && { ...defaults.height }
        : range(media.heightMm, defaults.height ?? LABEL_LENGTH),
    color: false,
    duplex: false,
  }
}
