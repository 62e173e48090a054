import { type Bitmap, createBitmap } from '../languages/bitmap.ts'
import { createGreyPage, type GreyPage, WHITE } from './grey-page.ts'
import type { MediaPlan } from './media-plan.ts'

/** Where a page lands in the image, in dots: the page after turning and scaling, and the area it may use. */
export interface PagePlacement {
  /** Turned a quarter turn counter-clockwise. */
  rotated: boolean
  /** The page's size once turned and scaled. */
  width: number
  height: number
  /** Its top-left corner in the image (may be outside it: that part is cropped). */
  left: number
  top: number
  /** The image's size. */
  imageWidth: number
  imageHeight: number
  /** The printable area in the image: nothing is drawn outside it (margins stay white). */
  area: { left: number; top: number; right: number; bottom: number }
}

/**
 * Where a page of `pageWidth` × `pageHeight` dots (rendered at the plan's dpi) lands (docs/pdf-printing.md,
 * "Layout rules": orientation, scaling, offsets, margins).
 */
export function placePage(pageWidth: number, pageHeight: number, plan: MediaPlan): PagePlacement {
  const { margins, imageWidth, imageLeft } = plan
  const continuous = plan.mediaHeight === null
  // The printable area in image coordinates: the media less its margins, within the head's width.
  const left = Math.max(0, margins.left - imageLeft)
  const right = Math.min(imageWidth, plan.mediaWidth - margins.right - imageLeft)
  const top = margins.top
  const fixedBottom = continuous ? null : plan.mediaHeight! - margins.bottom
  const areaWidth = Math.max(0, right - left)
  const areaHeight = fixedBottom === null ? null : Math.max(0, fixedBottom - top)

  const rotated = shouldRotate(pageWidth, pageHeight, plan, areaWidth, areaHeight)
  const turnedWidth = rotated ? pageHeight : pageWidth
  const turnedHeight = rotated ? pageWidth : pageHeight
  let width = turnedWidth
  let height = turnedHeight
  if (plan.scaleMode === 'fit') {
    const scale = Math.min(
      areaWidth / turnedWidth,
      areaHeight === null ? Number.POSITIVE_INFINITY : areaHeight / turnedHeight,
    )
    const scaledWidth = Math.max(1, Math.round(turnedWidth * scale))
    const scaledHeight = Math.max(1, Math.round(turnedHeight * scale))
    // A page within one dot of the area's size is not scaled: resampling would only blur it.
    if (Math.abs(scaledWidth - turnedWidth) > 1 || Math.abs(scaledHeight - turnedHeight) > 1) {
      width = scaledWidth
      height = scaledHeight
    }
  }
  const centred = plan.scaleMode === 'fit'
  // fit centres the page in the printable area; none puts it at the media's corner inside the margins,
  // which on paper wider than the head is outside the image (that strip is cropped).
  const pageLeft =
    (centred ? left + Math.floor((areaWidth - width) / 2) : margins.left - imageLeft) + plan.offsetX
  const pageTop =
    top + (centred && areaHeight !== null ? Math.floor((areaHeight - height) / 2) : 0) + plan.offsetY
  // Continuous media is as long as its content plus the margins.
  const imageHeight = plan.mediaHeight ?? Math.max(1, Math.max(top, pageTop + height) + margins.bottom)
  const bottom = fixedBottom ?? imageHeight - margins.bottom
  return {
    rotated,
    width,
    height,
    left: pageLeft,
    top: pageTop,
    imageWidth,
    imageHeight,
    area: { left, top, right: Math.max(left, right), bottom: Math.max(top, bottom) },
  }
}

/**
 * Orientation (RFC 8011 §5.2.10, orientation-requested): `portrait` images the page across the media's short
 * edge, `landscape` across its long edge (a continuous roll's long edge is its length), turning the page +90°
 * (counter-clockwise) where needed: portrait media and rolls turn it for `landscape`, landscape media for
 * `portrait`. `default` turns a page on fixed-size media whose orientation differs from the printable area's,
 * and never on a roll.
 */
function shouldRotate(
  pageWidth: number,
  pageHeight: number,
  plan: MediaPlan,
  areaWidth: number,
  areaHeight: number | null,
): boolean {
  if (plan.orientation === 'default') {
    if (areaHeight === null || areaWidth === areaHeight || pageWidth === pageHeight) return false
    return pageWidth > pageHeight !== areaWidth > areaHeight
  }
  const mediaLandscape = plan.mediaHeight !== null && plan.mediaWidth > plan.mediaHeight
  return (plan.orientation === 'landscape') !== mediaLandscape
}

/** The page laid out on the media and dithered to black and white: the image the printer prints. */
export function layOutPage(page: GreyPage, plan: MediaPlan): Bitmap {
  const placement = placePage(page.width, page.height, plan)
  const turned = placement.rotated ? rotateCounterClockwise(page) : page
  const scaled =
    turned.width === placement.width && turned.height === placement.height
      ? turned
      : resample(turned, placement.width, placement.height)
  const image = createGreyPage(placement.imageWidth, placement.imageHeight)
  const { area } = placement
  const x0 = Math.max(area.left, placement.left)
  const x1 = Math.min(area.right, placement.left + scaled.width)
  const y0 = Math.max(area.top, placement.top)
  const y1 = Math.min(area.bottom, placement.top + scaled.height)
  const target = image.data as Uint8Array
  if (x1 > x0) {
    for (let y = y0; y < y1; y++) {
      const from = (y - placement.top) * scaled.width + (x0 - placement.left)
      target.set(scaled.data.subarray(from, from + (x1 - x0)), y * image.width + x0)
    }
  }
  return dither(image)
}

/** The page turned +90° (counter-clockwise): its top row becomes the left column, read bottom to top. */
export function rotateCounterClockwise(page: GreyPage): GreyPage {
  const { width, height, data } = page
  const out = new Uint8Array(width * height)
  // Turned, the page is `height` wide and `width` high; dot (u, v) comes from (width - 1 - v, u).
  for (let v = 0; v < width; v++) {
    const x = width - 1 - v
    for (let u = 0; u < height; u++) out[v * height + u] = data[u * width + x]!
  }
  return { width: height, height: width, data: out }
}

/** Weights of the source dots each output dot covers along one axis (box filter, by covered length). */
function coverage(
  sourceLength: number,
  targetLength: number,
): { first: Int32Array; weights: Float32Array[] } {
  const step = sourceLength / targetLength
  const first = new Int32Array(targetLength)
  const weights: Float32Array[] = []
  for (let i = 0; i < targetLength; i++) {
    const start = i * step
    const end = Math.min(sourceLength, start + step)
    const a = Math.floor(start)
    const b = Math.min(sourceLength, Math.ceil(end))
    const w = new Float32Array(Math.max(1, b - a))
    for (let s = a; s < b; s++) w[s - a] = (Math.min(end, s + 1) - Math.max(start, s)) / step
    first[i] = a
    weights.push(w)
  }
  return { first, weights }
}

/** The page resampled to `width` × `height` dots, each dot the average grey of the area it covers. */
export function resample(page: GreyPage, width: number, height: number): GreyPage {
  const across = coverage(page.width, width)
  const down = coverage(page.height, height)
  // Across first, into floats (one row of the output width per source row), then down.
  const rows = new Float32Array(page.height * width)
  for (let y = 0; y < page.height; y++) {
    const row = y * page.width
    for (let x = 0; x < width; x++) {
      const first = across.first[x]!
      const w = across.weights[x]!
      let sum = 0
      for (let k = 0; k < w.length; k++) sum += w[k]! * page.data[row + first + k]!
      rows[y * width + x] = sum
    }
  }
  const out = new Uint8Array(width * height)
  for (let y = 0; y < height; y++) {
    const first = down.first[y]!
    const w = down.weights[y]!
    for (let x = 0; x < width; x++) {
      let sum = 0
      for (let k = 0; k < w.length; k++) sum += w[k]! * rows[(first + k) * width + x]!
      out[y * width + x] = Math.max(0, Math.min(WHITE, Math.round(sum)))
    }
  }
  return { width, height, data: out }
}

/**
 * Floyd–Steinberg error diffusion (Floyd and Steinberg, "An adaptive algorithm for spatial greyscale",
 * 1976): each dot is black below mid-grey, and its error goes 7/16 right, 3/16 down-left, 5/16 down and
 * 1/16 down-right. Pure black and white dots with no error reaching them stay as they are.
 */
export function dither(page: GreyPage): Bitmap {
  const { width, height, data } = page
  const bitmap = createBitmap(width, height)
  const bits = bitmap.data as Uint8Array
  const stride = Math.ceil(width / 8)
  let current = new Float32Array(width + 2)
  let next = new Float32Array(width + 2)
  for (let y = 0; y < height; y++) {
    const row = y * width
    for (let x = 0; x < width; x++) {
      const value = data[row + x]! + current[x + 1]!
      const black = value < 128
      const error = value - (black ? 0 : WHITE)
      if (black) bits[y * stride + (x >> 3)]! |= 0x80 >> (x & 7)
      if (error !== 0) {
        current[x + 2]! += (error * 7) / 16
        next[x]! += (error * 3) / 16
        next[x + 1]! += (error * 5) / 16
        next[x + 2]! += error / 16
      }
    }
    const done = current
    current = next
    next = done.fill(0)
  }
  return bitmap
}
