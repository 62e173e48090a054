import { type Bitmap, bytesPerRow, createBitmap } from '../languages/bitmap.ts'
import { type GreyPage, WHITE } from './grey-page.ts'

/**
 * Floyd–Steinberg error diffusion (Floyd and Steinberg, "An adaptive algorithm for spatial greyscale",
 * 1976): each dot is black below mid-grey, and its error goes 7/16 right, 3/16 down-left, 5/16 down and
 * 1/16 down-right. Pure black and white dots with no error reaching them stay as they are.
 */
export function dither(page: GreyPage): Bitmap {
  const { width, height, data } = page
  const bitmap = createBitmap(width, height)
  const bits = bitmap.data as Uint8Array
  const stride = bytesPerRow(width)
  // The error reaching row y's dot x is current[x + 1]; row y + 1's is gathered in next.
  let current = new Float32Array(width + 2)
  let next = new Float32Array(width + 2)
  // While no error has been diffused yet, current is all zeros and rows of pure black and white are copied.
  let errorFree = true
  const source = Buffer.from(data.buffer, data.byteOffset, data.byteLength)
  const white = Buffer.alloc(width, WHITE)
  for (let y = 0; y < height; ) {
    const row = y * width
    const out = y * stride
    if (
      errorFree &&
      (white.compare(source, row, row + width) === 0 || packBlackAndWhite(data, row, width, bits, out))
    ) {
      y++
      continue
    }
    const two = y + 1 < height
    errorFree = two
      ? diffuseTwoRows(data, row, width, current, next, bits, out, stride)
      : diffuseRow(data, row, width, current, next, bits, out)
    const done = current
    current = next
    next = done
    y += two ? 2 : 1
  }
  return bitmap
}

/** Packs a row holding only 0 and 255 into bits; false (its bits left white) when it holds any grey. */
function packBlackAndWhite(
  data: Uint8Array,
  row: number,
  width: number,
  bits: Uint8Array,
  out: number,
): boolean {
  let byte = 0
  for (let x = 0; x < width; x++) {
    // 1 for black (0), 0 for white (255), more for any grey.
    const dot = (data[row + x]! + 1) & 0xff
    if (dot > 1) {
      bits.fill(0, out, out + (x >> 3))
      return false
    }
    byte = (byte << 1) | dot
    if ((x & 7) === 7) {
      bits[out + (x >> 3)] = byte
      byte = 0
    }
  }
  if ((width & 7) !== 0) bits[out + (width >> 3)] = byte << (8 - (width & 7))
  return true
}

/**
 * One row of error diffusion. Reads the error reaching each dot from `current` and overwrites every entry of
 * `next` with the error reaching the row below. Each sum is rounded to single precision where the float
 * arrays would store it, in the order they would, so the result is that of adding into Float32Arrays.
 * Returns true when no dot had an error (so `next` is all zeros).
 */
function diffuseRow(
  data: Uint8Array,
  row: number,
  width: number,
  current: Float32Array,
  next: Float32Array,
  bits: Uint8Array,
  out: number,
): boolean {
  const f32 = Math.fround
  let none = true
  // Error reaching this dot; what next[x] and next[x + 1] hold so far.
  let incoming = current[1]!
  let below = 0
  let belowRight = 0
  let byte = 0
  for (let x = 0; x < width; x++) {
    const value = data[row + x]! + incoming
    const black = value < 128
    const error = black ? value : value - WHITE
    byte = (byte << 1) | (black ? 1 : 0)
    if ((x & 7) === 7) {
      bits[out + (x >> 3)] = byte
      byte = 0
    }
    if (error !== 0) none = false
    incoming = f32(current[x + 2]! + (error * 7) / 16)
    next[x] = f32(below + (error * 3) / 16)
    below = f32(belowRight + (error * 5) / 16)
    belowRight = f32(error / 16)
  }
  if ((width & 7) !== 0) bits[out + (width >> 3)] = byte << (8 - (width & 7))
  next[width] = below
  next[width + 1] = belowRight
  return none
}

/**
 * Two rows of error diffusion at once, as diffuseRow would do them one after the other: the lower row runs
 * two dots behind the upper one, as soon as every error reaching its dot is known, so that the two chains of
 * sums (each dot waits for the error of the dot before it) overlap. Writes the error reaching the row below
 * both into every entry of `next`; returns true when the lower row had no error.
 */
function diffuseTwoRows(
  data: Uint8Array,
  row: number,
  width: number,
  current: Float32Array,
  next: Float32Array,
  bits: Uint8Array,
  out: number,
  stride: number,
): boolean {
  const f32 = Math.fround
  const lower = row + width
  const lowerOut = out + stride
  let none = true
  // The upper row, as in diffuseRow; `between` is the entry of next it has just completed, for the lower row.
  let incoming = current[1]!
  let below = 0
  let belowRight = 0
  let byte = 0
  // The lower row.
  let lowerIncoming = 0
  let lowerBelow = 0
  let lowerBelowRight = 0
  let lowerByte = 0
  for (let x = 0; x < width + 2; x++) {
    let between: number
    if (x < width) {
      const value = data[row + x]! + incoming
      const black = value < 128
      const error = black ? value : value - WHITE
      byte = (byte << 1) | (black ? 1 : 0)
      if ((x & 7) === 7) {
        bits[out + (x >> 3)] = byte
        byte = 0
      }
      incoming = f32(current[x + 2]! + (error * 7) / 16)
      between = f32(below + (error * 3) / 16)
      below = f32(belowRight + (error * 5) / 16)
      belowRight = f32(error / 16)
    } else between = x === width ? below : belowRight
    if (x === 1) lowerIncoming = between
    const u = x - 2
    if (u >= 0) {
      const value = data[lower + u]! + lowerIncoming
      const black = value < 128
      const error = black ? value : value - WHITE
      lowerByte = (lowerByte << 1) | (black ? 1 : 0)
      if ((u & 7) === 7) {
        bits[lowerOut + (u >> 3)] = lowerByte
        lowerByte = 0
      }
      if (error !== 0) none = false
      lowerIncoming = f32(between + (error * 7) / 16)
      next[u] = f32(lowerBelow + (error * 3) / 16)
      lowerBelow = f32(lowerBelowRight + (error * 5) / 16)
      lowerBelowRight = f32(error / 16)
    }
  }
  if ((width & 7) !== 0) {
    bits[out + (width >> 3)] = byte << (8 - (width & 7))
    bits[lowerOut + (width >> 3)] = lowerByte << (8 - (width & 7))
  }
  next[width] = lowerBelow
  next[width + 1] = lowerBelowRight
  return none
}
