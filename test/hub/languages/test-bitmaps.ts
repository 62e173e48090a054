import { type Bitmap, bytesPerRow, createBitmap, setBlack } from '../../../hub/languages/bitmap.ts'

/** A bitmap drawn as text, one string per row: `#` black, anything else white. */
export function bitmapFromRows(rows: readonly string[]): Bitmap {
  const bitmap = createBitmap(rows[0]!.length, rows.length)
  rows.forEach((row, y) => {
    for (let x = 0; x < row.length; x++) if (row[x] === '#') setBlack(bitmap, x, y)
  })
  return bitmap
}

/**
 * A recognisable pattern of any size: a one-dot frame, a diagonal, and a row number in binary near the left
 * edge, so that a shifted, flipped, truncated or swapped row shows.
 */
export function patternBitmap(width: number, height: number): Bitmap {
  const bitmap = createBitmap(width, height)
  for (let y = 0; y < height; y++)
    for (let x = 0; x < width; x++) {
      const frame = x === 0 || y === 0 || x === width - 1 || y === height - 1
      const diagonal = x === y % width
      const rowNumber = x >= 2 && x < 14 && ((y >> (x - 2)) & 1) === 1
      if (frame || diagonal || rowNumber) setBlack(bitmap, x, y)
    }
  return bitmap
}

/**
 * The bitmap a decoder can give back: languages carry whole bytes per row, so the width grows to a multiple
 * of 8 and the padding dots are white.
 */
export function byteAligned(bitmap: Bitmap): Bitmap {
  return { width: bytesPerRow(bitmap.width) * 8, height: bitmap.height, data: bitmap.data }
}
