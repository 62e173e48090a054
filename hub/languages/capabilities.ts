import type { RawLanguage } from '../../protocol/enums.ts'
import type { PrinterCapabilities } from '../../protocol/printer.ts'
import { driverFor } from './index.ts'
import { LABEL_LENGTH, type MediaDefaults } from './media-defaults.ts'

/** What a printer URI may say about the media (`dpi=`, `width_mm=`, `height_mm=`); null: not said. */
export interface MediaOptions {
  dpi: number | null
  /** Widest media it takes, in mm. */
  widthMm: number | null
  /** Longest label it takes, in mm. */
  heightMm: number | null
}

/** The media a printer of `language` takes unless its URI says otherwise (its driver's defaults). */
export function mediaDefaultsFor(language: RawLanguage): MediaDefaults {
  return driverFor(language).mediaDefaults
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
