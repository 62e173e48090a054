import type { Bitmap } from './bitmap.ts'

/** What a raster encoder needs besides the pages. */
export interface RasterOptions {
  /** Copies of the whole document (at least 1). */
  copies: number
  /** The printer's resolution, for languages that size the label in mm or inches. */
  dpi: number
}

/**
 * How one printer language prints 1-bit pages, a page at a time, so that a document's pages can stream to
 * the printer as they are rendered.
 */
export interface RasterEncoding {
  /** Bytes sent once before the first page (ESC/POS `ESC @`); empty when the language needs none. */
  readonly prologue: Buffer
  /** One page, printed `quantity` times in a row. */
  page(page: Bitmap, quantity: number, options: RasterOptions): Buffer
}

/** The whole job at once: the prologue, then the pages in collated order (collatedPrints). */
export function encodeRasterJob(
  encoding: RasterEncoding,
  pages: readonly Bitmap[],
  options: RasterOptions,
): Buffer {
  const prints = collatedPrints(pages, options.copies)
  return Buffer.concat([
    encoding.prologue,
    ...prints.map(({ page, quantity }) => encoding.page(page, quantity, options)),
  ])
}

/** One page to print `quantity` times in a row. */
export interface PagePrint {
  page: Bitmap
  quantity: number
}

/**
 * The order pages come out in for `copies` copies of a document, collated: a one-page document is that
 * page `copies` times (a label printer's own quantity: ZPL ^PQ, TSPL PRINT, CPCL header qty); a longer one
 * is the whole sequence `copies` times, each page once (1 2 3 1 2 3), so that copies come out in order.
 */
export function collatedPrints(pages: readonly Bitmap[], copies: number): PagePrint[] {
  if (!Number.isInteger(copies) || copies < 1)
    throw new RangeError(`copies must be at least 1, not ${copies}`)
  if (pages.length === 1) return [{ page: pages[0]!, quantity: copies }]
  const prints: PagePrint[] = []
  for (let copy = 0; copy < copies; copy++) for (const page of pages) prints.push({ page, quantity: 1 })
  return prints
}
