/**
 * A 1-bit page raster: `height` rows of `width` dots, each row packed into `bytesPerRow(width)` bytes,
 * most significant bit = leftmost dot, 1 = black (as ESC/POS GS v 0 and ZPL ^GF take it). The bits after the
 * last dot of a row (padding to a whole byte) are 0 (white).
 */
export interface Bitmap {
  readonly width: number
  readonly height: number
  /** `height × bytesPerRow(width)` bytes, row after row. */
  readonly data: Uint8Array
}

export function bytesPerRow(width: number): number {
  return Math.ceil(width / 8)
}

/** An all-white bitmap. */
export function createBitmap(width: number, height: number): Bitmap {
  if (!Number.isInteger(width) || !Number.isInteger(height) || width < 1 || height < 1)
    throw new RangeError(`a bitmap is at least 1 × 1 dots, not ${width} × ${height}`)
  return { width, height, data: new Uint8Array(bytesPerRow(width) * height) }
}

export function isBlack(bitmap: Bitmap, x: number, y: number): boolean {
  const byte = bitmap.data[y * bytesPerRow(bitmap.width) + (x >> 3)]!
  return (byte & (0x80 >> (x & 7))) !== 0
}

export function setBlack(bitmap: Bitmap, x: number, y: number): void {
  const data = bitmap.data as Uint8Array
  data[y * bytesPerRow(bitmap.width) + (x >> 3)]! |= 0x80 >> (x & 7)
}

/** Rows `from` to `to` (excluded) as their packed bytes, sharing the bitmap's memory. */
export function bitmapRows(bitmap: Bitmap, from: number, to: number): Uint8Array {
  const stride = bytesPerRow(bitmap.width)
  return bitmap.data.subarray(from * stride, to * stride)
}

/** Throws when `data` does not hold exactly the rows `width` and `height` say. */
export function checkBitmap(bitmap: Bitmap): void {
  const expected = bytesPerRow(bitmap.width) * bitmap.height
  if (bitmap.width < 1 || bitmap.height < 1 || bitmap.data.length !== expected)
    throw new RangeError(
      `a ${bitmap.width} × ${bitmap.height} bitmap holds ${expected} bytes, not ${bitmap.data.length}`,
    )
}
