import type { Bitmap } from '../languages/bitmap.ts'
import { dither } from './dither.ts'
import { createGreyPage, type GreyPage } from './grey-page.ts'
import type { MediaPlan } from './media-plan.ts'
import { resample } from './resample.ts'

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
  const { area } = placement
  const fillsImage =
    placement.left === 0 &&
    placement.top === 0 &&
    scaled.width === placement.imageWidth &&
    scaled.height === placement.imageHeight &&
    area.left === 0 &&
    area.top === 0 &&
    area.right === placement.imageWidth &&
    area.bottom === placement.imageHeight
  if (fillsImage) return dither(scaled)
  const image = createGreyPage(placement.imageWidth, placement.imageHeight)
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
