import { collections, integerOrRange } from './attribute-values.ts'

export interface MmRange {
  min: number
  max: number
}

/** Media sizes a printer takes: one size (min = max) or a custom range, in millimetres. */
export interface MediaSizeRange {
  width: MmRange
  height: MmRange
}

export interface MediaSizeMm {
  widthMm: number
  heightMm: number
}

/**
 * PWG 5101.1 §5 self-describing media size names, class_name_WIDTHxHEIGHTunit: `iso_a4_210x297mm`,
 * `na_letter_8.5x11in`. `custom_min_*` and `custom_max_*` bound a printer's custom sizes.
 */
const SELF_DESCRIBING = /^([a-z0-9]+)_([a-z0-9][-a-z0-9.]*)_(\d+(?:\.\d+)?)x(\d+(?:\.\d+)?)(in|mm)$/

const MM_PER_INCH = 25.4
const roundMm = (mm: number) => Math.round(mm * 100) / 100

interface ParsedName {
  size: MediaSizeMm
  bound: 'min' | 'max' | null
}

function parseName(keyword: string): ParsedName | null {
  const match = SELF_DESCRIBING.exec(keyword)
  if (!match) return null
  const [, prefix, name, width, height, unit] = match
  const scale = unit === 'in' ? MM_PER_INCH : 1
  const size = { widthMm: roundMm(Number(width) * scale), heightMm: roundMm(Number(height) * scale) }
  const bound = prefix === 'custom' && (name === 'min' || name === 'max') ? name : null
  return { size, bound }
}

/** The size a media keyword names (not the custom bounds); null for names that say no size. */
export function mediaSizeOfKeyword(keyword: string): MediaSizeMm | null {
  const parsed = parseName(keyword)
  return parsed && parsed.bound === null ? parsed.size : null
}

/** A media-col "media-size" collection (PWG 5100.7: x-dimension × y-dimension in hundredths of mm). */
export function mediaSizeOfCollection(mediaSize: unknown): MediaSizeMm | null {
  const [collection] = collections(mediaSize)
  const x = collection?.['x-dimension']
  const y = collection?.['y-dimension']
  if (!Number.isInteger(x) || !Number.isInteger(y)) return null
  return { widthMm: (x as number) / 100, heightMm: (y as number) / 100 }
}

const exactly = (size: MediaSizeMm): MediaSizeRange => ({
  width: { min: size.widthMm, max: size.widthMm },
  height: { min: size.heightMm, max: size.heightMm },
})

/**
 * Every size and custom range a printer states: "media-supported" keywords (with the custom_min/custom_max
 * pair as one range) and "media-size-supported" collections, whose dimensions are integers or ranges
 * (PWG 5100.7 media-size-supported).
 */
export function mediaSizesSupported(mediaSupported: string[], mediaSizeSupported: unknown): MediaSizeRange[] {
  const sizes: MediaSizeRange[] = []
  let customMin: MediaSizeMm | null = null
  let customMax: MediaSizeMm | null = null
  for (const keyword of mediaSupported) {
    const parsed = parseName(keyword)
    if (parsed?.bound === 'min') customMin = parsed.size
    else if (parsed?.bound === 'max') customMax = parsed.size
    else if (parsed) sizes.push(exactly(parsed.size))
  }
  if (customMin && customMax)
    sizes.push({
      width: { min: customMin.widthMm, max: customMax.widthMm },
      height: { min: customMin.heightMm, max: customMax.heightMm },
    })
  for (const collection of collections(mediaSizeSupported)) {
    const x = integerOrRange(collection['x-dimension'])
    const y = integerOrRange(collection['y-dimension'])
    if (x && y)
      sizes.push({
        width: { min: x.min / 100, max: x.max / 100 },
        height: { min: y.min / 100, max: y.max / 100 },
      })
  }
  // Printers state most sizes both ways; keep one of each (to the tenth of a millimetre).
  const key = (r: MediaSizeRange) =>
    [r.width.min, r.width.max, r.height.min, r.height.max].map((mm) => mm.toFixed(1)).join()
  return [...new Map(sizes.map((size) => [key(size), size])).values()]
}

/** How close two sizes in mm must be to be the same paper. */
const SAME_SIZE_MM = 0.5

const within = (mm: number, range: MmRange) =>
  mm >= range.min - SAME_SIZE_MM && mm <= range.max + SAME_SIZE_MM

export function rangeHolds(range: MediaSizeRange, size: MediaSizeMm): boolean {
  return within(size.widthMm, range.width) && within(size.heightMm, range.height)
}

/**
 * The media-supported keyword for a size, either way round (a sheet is the same sheet whichever edge
 * the job calls its width); null when the printer names no such size.
 */
export function keywordForSize(mediaSupported: string[], size: MediaSizeMm): string | null {
  const turned = { widthMm: size.heightMm, heightMm: size.widthMm }
  return (
    mediaSupported.find((keyword) => {
      const named = mediaSizeOfKeyword(keyword)
      return named !== null && (rangeHolds(exactly(named), size) || rangeHolds(exactly(named), turned))
    }) ?? null
  )
}
