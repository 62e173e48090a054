import type { PrinterCapabilities } from '../../protocol/printer.ts'
import type { PrinterHealth } from '../../protocol/printer-health.ts'
import { collections, integerOrRange, squareResolutionsDpi, strings, text } from './attribute-values.ts'
import { enumNumber, type IppAttributes } from './ipp-codec.ts'
import {
  type MediaSizeMm,
  type MediaSizeRange,
  mediaSizeOfCollection,
  mediaSizeOfKeyword,
  mediaSizesSupported,
} from './media-size.ts'
import { ippCapabilities } from './printer-capabilities.ts'
import { ippPrinterHealth } from './printer-health.ts'

export const PDF = 'application/pdf'
export const PWG_RASTER = 'image/pwg-raster'

/** The Job Template values a printer takes (the "*-supported" attributes ippJobAttributes checks). */
export interface IppJobTemplateSupport {
  /** copies-supported (RFC 8011 §5.2.5); null: copies cannot be asked for. */
  copies: { min: number; max: number } | null
  /** sides-supported (RFC 8011 §5.2.8). */
  sides: string[]
  /** print-color-mode-supported (PWG 5100.13 §6.2.3). */
  printColorModes: string[]
  /** orientation-requested-supported as enum numbers (RFC 8011 §5.2.10). */
  orientations: number[]
  /** print-scaling-supported (PWG 5100.13 §6.2.5). */
  printScalings: string[]
  /** media-col-supported: the member attributes media-col may carry (PWG 5100.7). */
  mediaColMembers: string[]
  /** Sizes from media-supported and media-size-supported, with custom ranges. */
  mediaSizes: MediaSizeRange[]
}

export interface IppPrinterDescription {
  capabilities: PrinterCapabilities
  health: PrinterHealth
  /** printer-info, else printer-name. */
  name: string | null
  makeAndModel: string | null
  documentFormats: string[]
  takesPdf: boolean
  takesPwgRaster: boolean
  /** pwg-raster-document-resolution-supported, in dpi, those with the same resolution both ways. */
  pwgRasterResolutions: number[]
  /** pwg-raster-document-type-supported (PWG 5102.4): `sgray_8`, `srgb_8`, `black_1`, ... */
  pwgRasterTypes: string[]
  mediaSupported: string[]
  jobTemplate: IppJobTemplateSupport
}

/** What describeIppPrinter asks for (RFC 8011 §4.2.5 requested-attributes): only what it reads. */
export const DESCRIPTION_ATTRIBUTES = [
  'printer-state',
  'printer-state-reasons',
  'printer-info',
  'printer-name',
  'printer-make-and-model',
  'document-format-supported',
  'printer-resolution-supported',
  'printer-resolution-default',
  'pwg-raster-document-resolution-supported',
  'pwg-raster-document-type-supported',
  'media-supported',
  'media-default',
  'media-col-default',
  'media-col-supported',
  'media-size-supported',
  'color-supported',
  'print-color-mode-supported',
  'sides-supported',
  'copies-supported',
  'orientation-requested-supported',
  'print-scaling-supported',
] as const

/** What health needs: the state and its reasons. */
export const HEALTH_ATTRIBUTES = ['printer-state', 'printer-state-reasons'] as const

/** Health from a Get-Printer-Attributes answer (the package reads the printer-state enum by name). */
export function healthOfAttributes(attributes: IppAttributes, now: Date): PrinterHealth {
  const state = attributes['printer-state']
  const stateName = typeof state === 'string' ? state : null
  return ippPrinterHealth(stateName, strings(attributes['printer-state-reasons']), now)
}

/** Everything the hub needs from a printer's Get-Printer-Attributes answer. */
export function describeAttributes(attributes: IppAttributes, now: Date): IppPrinterDescription {
  const documentFormats = strings(attributes['document-format-supported'])
  const mediaSupported = strings(attributes['media-supported'])
  const jobTemplate: IppJobTemplateSupport = {
    copies: integerOrRange(attributes['copies-supported']),
    sides: strings(attributes['sides-supported']),
    printColorModes: strings(attributes['print-color-mode-supported']),
    orientations: orientations(attributes['orientation-requested-supported']),
    printScalings: strings(attributes['print-scaling-supported']),
    mediaColMembers: strings(attributes['media-col-supported']),
    mediaSizes: mediaSizesSupported(mediaSupported, attributes['media-size-supported']),
  }
  const description: Omit<IppPrinterDescription, 'capabilities'> = {
    health: healthOfAttributes(attributes, now),
    name: text(attributes['printer-info']) ?? text(attributes['printer-name']),
    makeAndModel: text(attributes['printer-make-and-model']),
    documentFormats,
    takesPdf: documentFormats.includes(PDF),
    takesPwgRaster: documentFormats.includes(PWG_RASTER),
    pwgRasterResolutions: squareResolutionsDpi(attributes['pwg-raster-document-resolution-supported']),
    pwgRasterTypes: strings(attributes['pwg-raster-document-type-supported']),
    mediaSupported,
    jobTemplate,
  }
  return {
    ...description,
    capabilities: ippCapabilities(description, {
      printerResolutions: squareResolutionsDpi(attributes['printer-resolution-supported']),
      printerResolutionDefault: squareResolutionsDpi(attributes['printer-resolution-default'])[0] ?? null,
      colorSupported: attributes['color-supported'] === true,
      defaultMedia: defaultMedia(attributes),
    }),
  }
}

function orientations(value: unknown): number[] {
  const values = Array.isArray(value) ? value : [value]
  return values.map((v) => enumNumber('orientation-requested', v)).filter((n): n is number => n !== null)
}

/** media-col-default's size, else media-default's. */
function defaultMedia(attributes: IppAttributes): MediaSizeMm | null {
  const [mediaCol] = collections(attributes['media-col-default'])
  const fromCol = mediaCol ? mediaSizeOfCollection(mediaCol['media-size']) : null
  if (fromCol) return fromCol
  const [keyword] = strings(attributes['media-default'])
  return keyword === undefined ? null : mediaSizeOfKeyword(keyword)
}
