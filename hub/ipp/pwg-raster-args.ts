import { resolve } from 'node:path'
import type { ResolvedPrintOptions } from '../../protocol/print-job.ts'
import { GHOSTSCRIPT_BASE_ARGS } from '../render/ghostscript-policy.ts'
import { requestedMedia } from './job-attributes.ts'
import type { MediaSizeMm } from './media-size.ts'
import type { IppPrinterDescription } from './printer-description.ts'

/** When a PWG raster printer states no resolution (PWG 5100.14 requires it to), this one. */
const FALLBACK_DPI = 300
const POINTS_PER_MM = 72 / 25.4

/**
 * Ghostscript's cupsColorSpace numbers for the PWG raster types (PWG 5102.4 ColorSpace; Ghostscript's
 * pwgraster device is its CUPS raster device writing PWG): sRGB 8-bit, sGray 8-bit, black 1-bit.
 */
const RASTER_TYPES = {
  srgb_8: { colorSpace: 19, bitsPerColor: 8 },
  sgray_8: { colorSpace: 18, bitsPerColor: 8 },
  black_1: { colorSpace: 3, bitsPerColor: 1 },
} as const

/**
 * Ghostscript arguments (argv[0] included, after the hub's Ghostscript policy: -dSAFER and the rest of
 * GHOSTSCRIPT_BASE_ARGS) that turn a PDF into PWG raster for this printer and job:
 * - resolution: the job's dpi when the printer takes it as PWG raster, else the printer's best;
 * - page size: the job's media (its size, else its intent's), else the printer's default media, fixed, with
 *   pages scaled to fit it when scale_mode is `fit`; without any, each page keeps its own size;
 * - colour: sRGB when the job asks for colour (or leaves it to a colour printer) and the printer takes
 *   srgb_8, else 8-bit grey (black_1 only for a printer that takes nothing else).
 */
export function pwgRasterArgs(
  pdfPath: string,
  outputPath: string,
  options: ResolvedPrintOptions,
  printer: IppPrinterDescription,
): string[] {
  const { colorSpace, bitsPerColor } = rasterType(options, printer)
  const media = requestedMedia(options) ?? printerDefaultMedia(printer)
  return [
    ...GHOSTSCRIPT_BASE_ARGS,
    '-sDEVICE=pwgraster',
    `-r${rasterDpi(options, printer)}`,
    `-dcupsColorSpace=${colorSpace}`,
    `-dcupsBitsPerColor=${bitsPerColor}`,
    ...(media === null ? [] : pageSizeArgs(media, options)),
    `-sOutputFile=${resolve(outputPath)}`,
    '-f',
    resolve(pdfPath),
  ]
}

function rasterDpi(options: ResolvedPrintOptions, printer: IppPrinterDescription): number {
  const resolutions = printer.pwgRasterResolutions
  if (options.dpi !== null && resolutions.includes(options.dpi)) return options.dpi
  if (resolutions.length > 0) return Math.max(...resolutions)
  return options.dpi ?? FALLBACK_DPI
}

function rasterType(options: ResolvedPrintOptions, printer: IppPrinterDescription) {
  const types = printer.pwgRasterTypes
  const colour =
    options.color_mode === 'color' || (options.color_mode === 'default' && printer.capabilities.color)
  if (colour && types.includes('srgb_8')) return RASTER_TYPES.srgb_8
  if (types.length > 0 && !types.includes('sgray_8') && types.includes('black_1')) return RASTER_TYPES.black_1
  return RASTER_TYPES.sgray_8
}

function printerDefaultMedia(printer: IppPrinterDescription): MediaSizeMm | null {
  const media = printer.capabilities.default_media
  if (!media || media.height_mm === null) return null
  return { widthMm: media.width_mm, heightMm: media.height_mm }
}

function pageSizeArgs(media: MediaSizeMm, options: ResolvedPrintOptions): string[] {
  const points = (mm: number) => Math.round(mm * POINTS_PER_MM * 100) / 100
  return [
    `-dDEVICEWIDTHPOINTS=${points(media.widthMm)}`,
    `-dDEVICEHEIGHTPOINTS=${points(media.heightMm)}`,
    '-dFIXEDMEDIA',
    ...(options.scale_mode === 'fit' ? ['-dPDFFitPage'] : []),
  ]
}
