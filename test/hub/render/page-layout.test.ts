import { describe, expect, it } from 'vitest'
import { type Bitmap, isBlack } from '../../../hub/languages/bitmap.ts'
import { capabilitiesFor } from '../../../hub/languages/capabilities.ts'
import { dither } from '../../../hub/render/dither.ts'
import { createGreyPage, type GreyPage } from '../../../hub/render/grey-page.ts'
import { planMedia, type RasterPrinter } from '../../../hub/render/media-plan.ts'
import { layOutPage, placePage, rotateCounterClockwise } from '../../../hub/render/page-layout.ts'
import { resample } from '../../../hub/render/resample.ts'
import { PRINT_OPTION_DEFAULTS, type ResolvedPrintOptions } from '../../../protocol/print-job.ts'

const NO_MEDIA = { dpi: null, widthMm: null, heightMm: null, headDots: null }
const labelPrinter: RasterPrinter = { capabilities: capabilitiesFor('zpl', NO_MEDIA), headDots: 832 }
const receiptPrinter: RasterPrinter = { capabilities: capabilitiesFor('escpos', NO_MEDIA), headDots: 576 }
const options = (changes: Partial<ResolvedPrintOptions> = {}): ResolvedPrintOptions => ({
  ...PRINT_OPTION_DEFAULTS,
  ...changes,
})
/** 4 × 6 in at 203 dpi. */
const LABEL = { width: 812, height: 1218 }

/** A white page with black rectangles [x, y, width, height]. */
function page(width: number, height: number, blocks: [number, number, number, number][] = []): GreyPage {
  const grey = createGreyPage(width, height)
  for (const [x, y, w, h] of blocks)
    for (let row = y; row < y + h; row++)
      (grey.data as Uint8Array).fill(0, row * width + x, row * width + x + w)
  return grey
}

function blackCount(bitmap: Bitmap): number {
  let count = 0
  for (let y = 0; y < bitmap.height; y++)
    for (let x = 0; x < bitmap.width; x++) if (isBlack(bitmap, x, y)) count++
  return count
}

describe('planMedia', () => {
  it('puts a receipt on the 80 mm roll: 639 dots of paper, 576 printed, centred, continuous', () => {
    // 80 mm at 203 dpi is 639.4 dots: 639, less the head's 576 leaves 31 dots on the left, 32 on the right.
    expect(planMedia(options(), receiptPrinter)).toMatchObject({
      dpi: 203,
      mediaWidth: 639,
      mediaHeight: null,
      imageWidth: 576,
      imageLeft: 31,
    })
  })

  it('takes the media from the intent when the printer takes it, else the printer’s own', () => {
    expect(planMedia(options({ intent: 'shipping_label' }), labelPrinter)).toMatchObject({
      mediaWidth: 812,
      mediaHeight: 1218,
      imageWidth: 812,
    })
    // A4 is wider than a 4 in label printer takes: its loaded 4 × 6 in label is used.
    expect(planMedia(options({ intent: 'a4_document' }), labelPrinter)).toMatchObject({
      mediaWidth: 812,
      mediaHeight: 1218,
    })
    // A roll stays a roll whatever the intent; a stated length cuts it.
    expect(planMedia(options({ intent: 'shipping_label' }), receiptPrinter)).toMatchObject({
      mediaHeight: null,
    })
    expect(planMedia(options({ media_height_mm: 100 }), receiptPrinter)).toMatchObject({ mediaHeight: 799 })
  })

  it('turns every length into dots at the job’s dpi', () => {
    expect(
      planMedia(
        options({
          dpi: 300,
          media_width_mm: 50.8,
          media_height_mm: 25.4,
          margin_top_mm: 1,
          margin_right_mm: 2,
          margin_bottom_mm: 3,
          margin_left_mm: 4,
          offset_x_mm: -2.54,
          offset_y_mm: 25.4,
        }),
        { capabilities: capabilitiesFor('zpl', { ...NO_MEDIA, dpi: 300 }), headDots: 1248 },
      ),
    ).toEqual({
      dpi: 300,
      mediaWidth: 600,
      mediaHeight: 300,
      imageWidth: 600,
      imageLeft: 0,
      margins: { top: 12, right: 24, bottom: 35, left: 47 },
      offsetX: -30,
      offsetY: 300,
      scaleMode: 'fit',
      orientation: 'default',
    })
  })
})

describe('placePage', () => {
  const label = planMedia(options({ intent: 'shipping_label' }), labelPrinter)

  it('leaves a page the size of the label as it is', () => {
    expect(placePage(812, 1218, label)).toMatchObject({
      rotated: false,
      width: 812,
      height: 1218,
      left: 0,
      top: 0,
    })
    // Within a dot: not scaled (resampling would only blur it).
    expect(placePage(813, 1219, label)).toMatchObject({ width: 813, height: 1219 })
  })

  it('fit: scales to the printable area keeping the aspect ratio, centred', () => {
    // An A4 page (1680 × 2376 at 203 dpi) on 4 × 6 in: limited by the width, 812 / 1680.
    expect(placePage(1680, 2376, label)).toMatchObject({ width: 812, height: 1148, rotated: false })
    const a4 = placePage(1680, 2376, label)
    expect(a4.width / a4.height).toBeCloseTo(1680 / 2376, 2)
    expect(Math.max(a4.width - 812, a4.height - 1218)).toBeLessThanOrEqual(0)
    expect([a4.left, a4.top]).toEqual([Math.floor((812 - a4.width) / 2), Math.floor((1218 - a4.height) / 2)])
  })

  it('default orientation: turns a landscape page on portrait media, never on a roll', () => {
    expect(placePage(1218, 812, label)).toMatchObject({ rotated: true, width: 812, height: 1218 })
    const receipt = planMedia(options(), receiptPrinter)
    expect(placePage(576, 300, receipt)).toMatchObject({
      rotated: false,
      width: 576,
      height: 300,
      imageHeight: 300,
    })
  })

  it('portrait never turns a page on portrait media; landscape always images across the long edge', () => {
    const portrait = placePage(1218, 812, { ...label, orientation: 'portrait' })
    expect(portrait).toMatchObject({ rotated: false, width: 812, height: 541, left: 0, top: 338 })
    expect(placePage(812, 1218, { ...label, orientation: 'landscape' })).toMatchObject({ rotated: true })
    expect(placePage(1218, 812, { ...label, orientation: 'landscape' })).toMatchObject({ rotated: true })
    // On landscape media it is the other way round.
    const wide = planMedia(options({ media_width_mm: 100, media_height_mm: 50 }), labelPrinter)
    expect(placePage(300, 600, { ...wide, orientation: 'portrait' })).toMatchObject({ rotated: true })
    expect(placePage(300, 600, { ...wide, orientation: 'landscape' })).toMatchObject({ rotated: false })
    const receipt = planMedia(options({ orientation: 'landscape' }), receiptPrinter)
    expect(placePage(576, 300, receipt)).toMatchObject({ rotated: true })
  })

  it('none: 1:1 from the printable area’s top-left corner, then the offsets; margins narrow the area', () => {
    const plan = planMedia(
      options({
        intent: 'shipping_label',
        scale_mode: 'none',
        orientation: 'portrait',
        margin_left_mm: 5,
        offset_x_mm: 2.5,
        offset_y_mm: -2.5,
      }),
      labelPrinter,
    )
    expect(placePage(400, 300, plan)).toMatchObject({
      width: 400,
      height: 300,
      left: 40 + 20,
      top: -20,
      area: { left: 40, top: 0, right: 812, bottom: 1218 },
    })
  })

  it('makes continuous media as long as the content plus the margins', () => {
    const plan = planMedia(options({ margin_top_mm: 5, margin_bottom_mm: 10 }), receiptPrinter)
    expect(placePage(576, 1000, plan)).toMatchObject({ top: 40, imageHeight: 40 + 1000 + 80 })
    // An 80 mm wide page fits the 72 mm head: scaled by 576 / 640.
    expect(placePage(640, 1000, planMedia(options(), receiptPrinter))).toMatchObject({
      width: 576,
      height: 900,
    })
  })
})

describe('layOutPage', () => {
  const label = planMedia(options({ intent: 'shipping_label' }), labelPrinter)

  it('prints a black-and-white page the size of the label dot for dot', () => {
    const blocks: [number, number, number, number][] = [
      [0, 0, 812, 8],
      [100, 200, 37, 400],
      [700, 1100, 112, 118],
    ]
    const out = layOutPage(page(LABEL.width, LABEL.height, blocks), label)
    expect([out.width, out.height]).toEqual([812, 1218])
    expect(blackCount(out)).toBe(812 * 8 + 37 * 400 + 112 * 118)
    expect([
      isBlack(out, 100, 200),
      isBlack(out, 136, 599),
      isBlack(out, 137, 599),
      isBlack(out, 811, 1217),
    ]).toEqual([true, true, false, true])
  })

  it('turns a landscape page counter-clockwise: its top-left corner lands bottom-left', () => {
    const out = layOutPage(page(1218, 812, [[0, 0, 100, 50]]), label)
    expect([out.width, out.height]).toEqual([812, 1218])
    // The page's top-left block (100 wide, 50 high) becomes 50 wide and 100 high at the bottom-left.
    expect([
      isBlack(out, 0, 1217),
      isBlack(out, 49, 1118),
      isBlack(out, 50, 1217),
      isBlack(out, 0, 1117),
    ]).toEqual([true, true, false, false])
    expect(blackCount(out)).toBe(5000)
  })

  it('crops what falls outside the printable area and keeps the margins white', () => {
    const plan = planMedia(
      options({ intent: 'shipping_label', scale_mode: 'none', margin_left_mm: 10, offset_y_mm: -5 }),
      labelPrinter,
    )
    const out = layOutPage(page(812, 1218, [[0, 0, 812, 1218]]), plan)
    // Left margin 80 dots white; the page moved up 40 dots: its bottom 40 rows are white.
    expect([
      isBlack(out, 79, 500),
      isBlack(out, 80, 0),
      isBlack(out, 811, 1177),
      isBlack(out, 811, 1178),
    ]).toEqual([false, true, true, false])
  })

  it('prints a receipt the head’s width on the roll, centred like the head on the paper', () => {
    const none = planMedia(options({ scale_mode: 'none' }), receiptPrinter)
    // An 80 mm page (639 dots) 1:1: its first 31 dots fall on the paper's unprinted left strip.
    const out = layOutPage(page(639, 100, [[31, 0, 1, 100]]), none)
    expect([out.width, out.height]).toEqual([576, 100])
    expect([isBlack(out, 0, 50), isBlack(out, 1, 50)]).toEqual([true, false])
  })

  it('scales a page down by averaging, then dithers: half the dots of a 50 % grey are black', () => {
    const half = planMedia(options({ media_width_mm: 50.8, media_height_mm: 50.8 }), labelPrinter)
    // A 2-dot checkerboard of 812 × 812 scaled to 406 × 406 averages to 50 % grey everywhere.
    const checker = createGreyPage(812, 812)
    for (let y = 0; y < 812; y++)
      for (let x = 0; x < 812; x++) (checker.data as Uint8Array)[y * 812 + x] = (x + y) % 2 === 0 ? 0 : 255
    const out = layOutPage(checker, half)
    expect([out.width, out.height]).toEqual([406, 406])
    expect(Math.abs(blackCount(out) / (406 * 406) - 0.5)).toBeLessThan(0.01)
  })
})

describe('raster steps', () => {
  it('rotateCounterClockwise moves the top row to the left column, bottom to top', () => {
    const grey = { width: 3, height: 2, data: Uint8Array.from([1, 2, 3, 4, 5, 6]) }
    expect(rotateCounterClockwise(grey)).toEqual({
      width: 2,
      height: 3,
      data: Uint8Array.from([3, 6, 2, 5, 1, 4]),
    })
  })

  it('resample averages the dots each output dot covers', () => {
    const grey = { width: 4, height: 2, data: Uint8Array.from([0, 255, 255, 255, 0, 0, 255, 255]) }
    expect([...resample(grey, 2, 1).data]).toEqual([64, 255])
    expect([...resample({ width: 1, height: 1, data: Uint8Array.from([7]) }, 3, 2).data]).toEqual([
      7, 7, 7, 7, 7, 7,
    ])
  })

  it('dither leaves pure black and white as they are and spreads grey', () => {
    const bw = { width: 9, height: 1, data: Uint8Array.from([0, 255, 0, 0, 255, 255, 0, 255, 0]) }
    expect([...dither(bw).data]).toEqual([0b10110010, 0b10000000])
    // 191 is a quarter of the way from white to black: about a quarter of the dots come out black.
    const grey = { width: 64, height: 64, data: new Uint8Array(64 * 64).fill(191) }
    expect(Math.abs(blackCount(dither(grey)) / (64 * 64) - 0.25)).toBeLessThan(0.02)
  })
})
