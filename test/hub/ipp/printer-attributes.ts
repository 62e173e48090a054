import type { IppAttributes } from '../../../hub/ipp/ipp-codec.ts'
import { describeAttributes } from '../../../hub/ipp/printer-description.ts'

/**
 * Get-Printer-Attributes answers as the `ipp` package reads them (one value as itself, a 1setOf as an
 * array, resolutions as [x, y, 'dpi'], ranges as [min, max], enums by name), after ippeveprinter's.
 */

/** A colour, two-sided office printer taking PDF and PWG raster, with a custom size range. */
export const OFFICE_PRINTER: IppAttributes = {
  'printer-state': 'idle',
  'printer-state-reasons': 'none',
  'printer-info': 'Front office',
  'printer-name': 'front-office',
  'printer-make-and-model': 'Example Printer',
  'document-format-supported': ['application/octet-stream', 'application/pdf', 'image/pwg-raster'],
  'printer-resolution-supported': [600, 600, 'dpi'],
  'printer-resolution-default': [600, 600, 'dpi'],
  'pwg-raster-document-resolution-supported': [
    [300, 300, 'dpi'],
    [600, 600, 'dpi'],
  ],
  'pwg-raster-document-type-supported': ['black_1', 'sgray_8', 'srgb_8'],
  'media-supported': [
    'na_letter_8.5x11in',
    'iso_a4_210x297mm',
    'iso_a5_148x210mm',
    'custom_min_3x5in',
    'custom_max_8.5x14in',
  ],
  'media-default': 'iso_a4_210x297mm',
  'media-col-default': {
    'media-size': { 'x-dimension': 21000, 'y-dimension': 29700 },
    'media-source': 'main',
  },
  'media-col-supported': ['media-size', 'media-source', 'media-type'],
  'media-size-supported': [
    { 'x-dimension': 21590, 'y-dimension': 27940 },
    { 'x-dimension': 21000, 'y-dimension': 29700 },
    { 'x-dimension': [7620, 21590], 'y-dimension': [12700, 35560] },
  ],
  'color-supported': true,
  'print-color-mode-supported': ['auto', 'color', 'monochrome'],
  'sides-supported': ['one-sided', 'two-sided-long-edge', 'two-sided-short-edge'],
  'copies-supported': [1, 99],
  'orientation-requested-supported': ['portrait', 'landscape', 'reverse-landscape', 'reverse-portrait'],
  'print-scaling-supported': ['auto', 'auto-fit', 'fill', 'fit', 'none'],
}

/**
 * A monochrome, one-sided printer taking PWG raster only, with no custom sizes and nothing of
 * media-col, copies, orientation or scaling.
 */
export const BASIC_RASTER_PRINTER: IppAttributes = {
  'printer-state': 'idle',
  'printer-state-reasons': 'none',
  'printer-name': 'basic',
  'document-format-supported': ['application/octet-stream', 'image/pwg-raster'],
  'printer-resolution-supported': [600, 600, 'dpi'],
  'printer-resolution-default': [600, 600, 'dpi'],
  'pwg-raster-document-resolution-supported': [
    [300, 300, 'dpi'],
    [600, 600, 'dpi'],
  ],
  'pwg-raster-document-type-supported': ['black_1', 'sgray_8'],
  'media-supported': ['na_letter_8.5x11in', 'iso_a4_210x297mm'],
  'media-default': 'na_letter_8.5x11in',
  'color-supported': false,
  'print-color-mode-supported': 'monochrome',
  'sides-supported': 'one-sided',
}

export const NOW = new Date('2030-01-02T03:04:05.000Z')

export function describedPrinter(attributes: IppAttributes, changes: IppAttributes = {}) {
  return describeAttributes({ ...attributes, ...changes }, NOW)
}
