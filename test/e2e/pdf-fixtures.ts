import { type PageSpec as Page, pagesPdf } from '../helpers/pdf.ts'

// PDFs for the end-to-end PDF printing tests (docs/pdf-printing.md). Every page is solid black shapes on
// white: no text (fonts differ in anti-aliasing) and no grey, so a page rendered 1:1 at 203 dpi must come out
// of the printer exactly as Ghostscript renders it. Shapes are placed asymmetrically, so that a rotation, a
// mirror or a shift by a few dots is caught. Sizes are in PDF points (1/72 in), origin at the bottom left.

/** The resolution every fixture is designed for (the simulators' default). */
export const FIXTURE_DPI = 203

/** Points for `dots` dots at 203 dpi. */
const dotsToPt = (dots: number) => (dots * 72) / FIXTURE_DPI

/** A filled black rectangle. */
const rect = (x: number, y: number, w: number, h: number) => `${x} ${y} ${w} ${h} re f`

/** A black frame `thickness` thick whose outer edge is `inset` from the page's edges (even-odd fill). */
function frame(width: number, height: number, inset: number, thickness: number): string {
  const inner = inset + thickness
  return (
    `${inset} ${inset} ${(width - 2 * inset).toFixed(4)} ${(height - 2 * inset).toFixed(4)} re ` +
    `${inner} ${inner} ${(width - 2 * inner).toFixed(4)} ${(height - 2 * inner).toFixed(4)} re f*`
  )
}

/**
 * Barcode-like vertical bars from `x`, `height` tall: bars and gaps alternate with the widths given (in
 * `unit` points), starting with a bar.
 */
function bars(x: number, y: number, height: number, widths: number[], unit: number): string {
  const parts: string[] = []
  let at = x
  widths.forEach((width, i) => {
    if (i % 2 === 0) parts.push(rect(Number(at.toFixed(3)), y, Number((width * unit).toFixed(3)), height))
    at += width * unit
  })
  return parts.join('\n')
}

/** Bar and gap widths of the label's barcode: irregular, like a Code 128 symbol. */
const BARCODE = [2, 1, 1, 2, 3, 1, 1, 1, 4, 2, 1, 3, 2, 2, 1, 1, 3, 1, 2, 4, 1, 1, 1, 2, 2, 3, 4, 1, 1, 2, 3]

/** A 4 × 6 in label page: 288 × 432 pt, 812 × 1218 dots at 203 dpi. */
export const LABEL_WIDTH_PT = 288
export const LABEL_HEIGHT_PT = 432

/** The options that print a 4 × 6 in label page 1:1 at 203 dpi. */
export const LABEL_MEDIA = { media_width_mm: 101.6, media_height_mm: 152.4, dpi: 203 } as const

function shippingLabelPage(): Page {
  const content = [
    '0 g',
    frame(LABEL_WIDTH_PT, LABEL_HEIGHT_PT, 8, 12),
    // a "logo" block at the top left, a line under it reaching towards the right
    rect(32, 344, 96, 56),
    rect(32, 316, 150, 8),
    // a tall narrow post left of centre, a block on the right, a small square low on the right
    rect(150, 176, 10, 110),
    rect(184, 232, 72, 40),
    rect(236, 176, 20, 20),
    // a small square near the bottom left corner
    rect(30, 30, 14, 14),
    // the barcode, low and off centre
    bars(52, 64, 84, BARCODE, 2.25),
  ].join('\n')
  return { width: LABEL_WIDTH_PT, height: LABEL_HEIGHT_PT, content }
}

/** A one-page 4 × 6 in shipping label (MediaBox 0 0 288 432) of solid black shapes. */
export function shippingLabelPdf(): Buffer {
  return pagesPdf([shippingLabelPage()])
}

/** The receipt page in dots at 203 dpi: as wide as an 80 mm receipt printer's head, about 120 mm long. */
export const RECEIPT_WIDTH_DOTS = 576
export const RECEIPT_HEIGHT_DOTS = 960

/** A one-page receipt exactly 576 dots wide at 203 dpi (576 × 72 / 203 pt) and 960 dots (120.1 mm) long. */
export function receiptPdf(): Buffer {
  const width = dotsToPt(RECEIPT_WIDTH_DOTS)
  const height = dotsToPt(RECEIPT_HEIGHT_DOTS)
  const lines = [120, 86, 124, 60, 104, 132].map((length, i) => rect(20, 252 - i * 16, length, 7))
  const content = [
    '0 g',
    frame(width, height, 4, 5),
    // a logo block at the top left and a short block to its right
    rect(20, 290, 64, 36),
    rect(96, 306, 40, 20),
    // item "lines" of different lengths, left aligned, and their amounts right aligned
    ...lines,
    ...[0, 2, 3, 5].map((i) => rect(160, 252 - i * 16, 24, 7)),
    // a thick rule, then the total, right aligned
    rect(20, 140, 164, 3),
    rect(120, 118, 64, 12),
    // a barcode near the bottom, off centre
    bars(30, 34, 50, BARCODE, 1.75),
  ].join('\n')
  return pagesPdf([{ width, height, content }])
}

/**
 * A 3-page 4 × 6 in label: every page has the frame; page n has a 96 pt square block at its own place
 * (top left, centre, bottom right) and 3n bars, so no page can pass for another (their overlap is about
 * 0.5).
 */
export function threePageLabelPdf(): Buffer {
  const blocks = [
    [32, 304],
    [96, 168],
    [160, 32],
  ] as const
  const pages = blocks.map(([x, y], i) => {
    const barCount = 3 * (i + 1)
    const widths = Array.from({ length: 2 * barCount - 1 }, (_, j) =>
      j % 2 === 0 ? 1 + ((j / 2 + i) % 3) : 2,
    )
    const content = [
      '0 g',
      frame(LABEL_WIDTH_PT, LABEL_HEIGHT_PT, 8, 12),
      rect(x, y, 96, 96),
      // the bars along the page's right edge area, above the bottom block's row
      bars(150, 330, 60, widths, 2),
    ].join('\n')
    return { width: LABEL_WIDTH_PT, height: LABEL_HEIGHT_PT, content }
  })
  return pagesPdf(pages)
}

/**
 * `%PDF-1.4` and a line break followed by 4 KiB of garbage (a fixed pseudo-random sequence): a PDF header
 * on something that is not a PDF. Ghostscript stops on it with an error.
 */
export function hostilePdf(): Buffer {
  const garbage = Buffer.alloc(4096)
  let state = 0x2545_f491
  for (let i = 0; i < garbage.length; i++) {
    // xorshift32
    state ^= state << 13
    state ^= state >>> 17
    state ^= state << 5
    garbage[i] = state & 0xff
  }
  return Buffer.concat([Buffer.from('%PDF-1.4\n', 'latin1'), garbage])
}

/**
 * A sound one-page PDF that the hub cannot render: 100 mm × 2100 mm, longer than the 2000 mm a side a hub
 * renders (docs/pdf-printing.md, Rendering). The cloud's inspection (Ghostscript at 72 dpi) accepts it, so,
 * unlike `hostilePdf`, it reaches the hub.
 */
export function overlongPagePdf(): Buffer {
  const mmToPt = (mm: number) => (mm / 25.4) * 72
  const width = mmToPt(100)
  const height = mmToPt(2100)
  return pagesPdf([{ width, height, content: ['0 g', rect(20, 20, 200, 400)].join('\n') }])
}
