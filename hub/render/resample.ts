import { type GreyPage, WHITE } from './grey-page.ts'

/**
 * The weights of the source dots each output dot covers along one axis (box filter, by covered length):
 * output dot i is the sum over k < taps of `weights[i * taps + k]` × source dot `first[i] + k`. The taps
 * around the covered dots weigh 0, which adds exactly nothing to the sum.
 */
interface Coverage {
  taps: number
  first: Int32Array
  weights: Float32Array
}

function coverage(sourceLength: number, targetLength: number): Coverage {
  const step = sourceLength / targetLength
  const taps = Math.min(sourceLength, Math.ceil(step) + 1)
  const first = new Int32Array(targetLength)
  const weights = new Float32Array(targetLength * taps)
  for (let i = 0; i < targetLength; i++) {
    const start = i * step
    const end = Math.min(sourceLength, start + step)
    const a = Math.floor(start)
    const b = Math.min(sourceLength, Math.ceil(end))
    // Near the far edge the taps start earlier, so that none reads past it.
    const at = Math.min(a, sourceLength - taps)
    for (let s = a; s < b; s++)
      weights[i * taps + s - at] = (Math.min(end, s + 1) - Math.max(start, s)) / step
    first[i] = at
  }
  return { taps, first, weights }
}

/** The page resampled to `width` × `height` dots, each dot the average grey of the area it covers. */
export function resample(page: GreyPage, width: number, height: number): GreyPage {
  const across = coverage(page.width, width)
  const down = coverage(page.height, height)
  // Across first, into floats (one row of the output width per source row), then down. The source rows an
  // output row covers are kept in a ring of `down.taps` rows, source row s in slot s % down.taps. A source
  // row equal to the one before it gives the same row. An output row covering white rows only is white: their
  // floats are within 0.001 of 255, and so is its sum before rounding.
  const ring = new Float32Array(down.taps * width)
  const white = new Uint8Array(page.height)
  const source = Buffer.from(page.data.buffer, page.data.byteOffset, page.data.byteLength)
  const whiteRow = Buffer.alloc(page.width, WHITE)
  let ready = 0
  const out = new Uint8Array(width * height)
  for (let y = 0; y < height; y++) {
    const first = down.first[y]!
    for (; ready < first + down.taps; ready++) {
      const start = ready * page.width
      const end = start + page.width
      const slot = (ready % down.taps) * width
      if (ready > 0 && source.compare(source, start - page.width, start, start, end) === 0) {
        const previous = ((ready - 1) % down.taps) * width
        ring.copyWithin(slot, previous, previous + width)
        white[ready] = white[ready - 1]!
      } else {
        white[ready] = whiteRow.compare(source, start, end) === 0 ? 1 : 0
        resampleRow(page.data, start, across, ring, slot, width)
      }
    }
    let allWhite = true
    for (let k = 0; k < down.taps && allWhite; k++)
      if (down.weights[y * down.taps + k] !== 0 && !white[first + k]) allWhite = false
    if (allWhite) out.fill(WHITE, y * width, (y + 1) * width)
    else combineRows(ring, first, down, y, out, width)
  }
  return { width, height, data: out }
}

/** One source row (from `start`) resampled across into `rows` from `at`, summed in the order of its taps. */
function resampleRow(
  data: Uint8Array,
  start: number,
  across: Coverage,
  rows: Float32Array,
  at: number,
  width: number,
): void {
  const { taps, first, weights } = across
  if (taps === 2) {
    for (let x = 0; x < width; x++) {
      const s = start + first[x]!
      rows[at + x] = weights[2 * x]! * data[s]! + weights[2 * x + 1]! * data[s + 1]!
    }
  } else if (taps === 3) {
    for (let x = 0; x < width; x++) {
      const s = start + first[x]!
      const w = 3 * x
      rows[at + x] = weights[w]! * data[s]! + weights[w + 1]! * data[s + 1]! + weights[w + 2]! * data[s + 2]!
    }
  } else {
    for (let x = 0; x < width; x++) {
      const s = start + first[x]!
      let sum = 0
      for (let k = 0; k < taps; k++) sum += weights[x * taps + k]! * data[s + k]!
      rows[at + x] = sum
    }
  }
}

/** Output row `y`: the source rows it covers (from `first`, in `ring`), weighted, summed and rounded. */
function combineRows(
  ring: Float32Array,
  first: number,
  down: Coverage,
  y: number,
  out: Uint8Array,
  width: number,
): void {
  // Taps that weigh 0 add exactly nothing, so only the others are summed, in the same order.
  const weights: number[] = []
  const starts: number[] = []
  for (let k = 0; k < down.taps; k++) {
    const weight = down.weights[y * down.taps + k]!
    if (weight === 0) continue
    weights.push(weight)
    starts.push(((first + k) % down.taps) * width)
  }
  const at = y * width
  if (weights.length === 1) {
    const [w0] = weights as [number]
    const [r0] = starts as [number]
    for (let x = 0; x < width; x++) out[at + x] = toGrey(w0 * ring[r0 + x]!)
  } else if (weights.length === 2) {
    const [w0, w1] = weights as [number, number]
    const [r0, r1] = starts as [number, number]
    for (let x = 0; x < width; x++) out[at + x] = toGrey(w0 * ring[r0 + x]! + w1 * ring[r1 + x]!)
  } else if (weights.length === 3) {
    const [w0, w1, w2] = weights as [number, number, number]
    const [r0, r1, r2] = starts as [number, number, number]
    for (let x = 0; x < width; x++)
      out[at + x] = toGrey(w0 * ring[r0 + x]! + w1 * ring[r1 + x]! + w2 * ring[r2 + x]!)
  } else {
    for (let x = 0; x < width; x++) {
      let sum = 0
      for (let k = 0; k < weights.length; k++) sum += weights[k]! * ring[starts[k]! + x]!
      out[at + x] = toGrey(sum)
    }
  }
}

function toGrey(sum: number): number {
  return Math.max(0, Math.min(WHITE, Math.round(sum)))
}
