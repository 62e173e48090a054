/**
 * A rendered page in 8-bit grey: `height` rows of `width` dots, one byte a dot, 0 = black, 255 = white (as
 * Ghostscript's pgmraw device writes it). Layout and dithering turn it into a 1-bit Bitmap.
 */
export interface GreyPage {
  readonly width: number
  readonly height: number
  /** `width × height` bytes, row after row. */
  readonly data: Uint8Array
}

export const WHITE = 255

/** An all-white page. */
export function createGreyPage(width: number, height: number): GreyPage {
  if (!Number.isInteger(width) || !Number.isInteger(height) || width < 1 || height < 1)
    throw new RangeError(`a page is at least 1 × 1 dots, not ${width} × ${height}`)
  return { width, height, data: new Uint8Array(width * height).fill(WHITE) }
}
