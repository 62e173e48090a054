import type { Intent } from '../../protocol/enums.ts'
import type { ResolvedPrintOptions } from '../../protocol/print-job.ts'
import type { PrinterCapabilities } from '../../protocol/printer.ts'

/** Millimetres per inch. */
const MM_PER_INCH = 25.4

/** Millimetres to dots at `dpi` (docs/pdf-printing.md: `round(v × dpi / 25.4)`). */
export function mmToDots(mm: number, dpi: number): number {
  return Math.round((mm * dpi) / MM_PER_INCH)
}

/** What the hub knows about a raster printer's media besides its capabilities. */
export interface RasterPrinter {
  capabilities: PrinterCapabilities
  /** Dots the head prints across (docs/pdf-printing.md, "Printable width"). */
  headDots: number
}

/**
 * Where a job's pages go, in dots at `dpi`: the image sent to the printer is `imageWidth` wide, cut out of
 * the media's width at `imageLeft`; `mediaHeight` null is continuous media (the image is as long as its
 * content). Margins are measured from the media's edges.
 */
export interface MediaPlan {
  dpi: number
  mediaWidth: number
  mediaHeight: number | null
  imageWidth: number
  imageLeft: number
  margins: { top: number; right: number; bottom: number; left: number }
  offsetX: number
  offsetY: number
  scaleMode: ResolvedPrintOptions['scale_mode']
  orientation: ResolvedPrintOptions['orientation']
}

interface MediaMm {
  width: number
  height: number | null
}

const A4: MediaMm = { width: 210, height: 297 }
const FOUR_BY_SIX: MediaMm = { width: 101.6, height: 152.4 }
/** The label assumed on a label printer whose URI states no size: 4 × 6 in, the common shipping label. */
const DEFAULT_LABEL = FOUR_BY_SIX

/** The media a printer has loaded: its default_media, else its widest width and (for labels) 4 × 6 in. */
export function defaultMediaOf(capabilities: PrinterCapabilities): MediaMm {
  const stated = capabilities.default_media
  if (stated) return { width: stated.width_mm, height: stated.height_mm }
  if (capabilities.media_height_mm === null) return { width: capabilities.media_width_mm.max, height: null }
  return DEFAULT_LABEL
}

/** The media an intent asks for (docs/pdf-printing.md, "Media"); null: the printer's default media. */
function intentMedia(intent: Intent, loaded: MediaMm, continuous: boolean): MediaMm | null {
  switch (intent) {
    case 'receipt':
      return continuous ? { width: loaded.width, height: null } : null
    case 'shipping_label':
      return FOUR_BY_SIX
    case 'a4_document':
    case 'invoice':
    case 'packing_slip':
      return A4
    default:
      return null
  }
}

function takes(capabilities: PrinterCapabilities, media: MediaMm): boolean {
  const { min, max } = capabilities.media_width_mm
  if (media.width < min || media.width > max) return false
  const heights = capabilities.media_height_mm
  if (heights === null || media.height === null) return true
  return media.height >= heights.min && media.height <= heights.max
}

/** The job's resolution: its dpi, else the printer's default, else the first it has, else 203. */
export function dpiOf(options: ResolvedPrintOptions, capabilities: PrinterCapabilities): number {
  return options.dpi ?? capabilities.default_dpi ?? capabilities.dpi[0] ?? 203
}

/** Turns a job's options into where its pages go on this printer (docs/pdf-printing.md, "Layout rules"). */
export function planMedia(options: ResolvedPrintOptions, printer: RasterPrinter): MediaPlan {
  const caps = printer.capabilities
  const dpi = dpiOf(options, caps)
  const continuous = caps.media_height_mm === null
  const loaded = defaultMediaOf(caps)
  const byIntent = intentMedia(options.intent, loaded, continuous)
  const chosen = byIntent && takes(caps, byIntent) ? byIntent : loaded
  const widthMm = options.media_width_mm ?? chosen.width
  // A roll stays a roll unless the job itself states a length: an intent's length does not apply to it.
  const heightMm = options.media_height_mm ?? (continuous ? null : chosen.height)
  const mediaWidth = Math.max(1, mmToDots(widthMm, dpi))
  const imageWidth = Math.min(mediaWidth, printer.headDots)
  const dots = (mm: number) => mmToDots(mm, dpi)
  return {
    dpi,
    mediaWidth,
    mediaHeight: heightMm === null ? null : Math.max(1, dots(heightMm)),
    imageWidth,
    // The head is centred on the paper: a wider paper loses equal strips on both sides.
    imageLeft: Math.floor((mediaWidth - imageWidth) / 2),
    margins: {
      top: dots(options.margin_top_mm),
      right: dots(options.margin_right_mm),
      bottom: dots(options.margin_bottom_mm),
      left: dots(options.margin_left_mm),
    },
    offsetX: dots(options.offset_x_mm),
    offsetY: dots(options.offset_y_mm),
    scaleMode: options.scale_mode,
    orientation: options.orientation,
  }
}
