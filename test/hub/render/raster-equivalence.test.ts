import { expect, it } from 'vitest'
import { bytesPerRow } from '../../../hub/languages/bitmap.ts'
import { dither } from '../../../hub/render/dither.ts'
import type { GreyPage } from '../../../hub/render/grey-page.ts'
import { resample } from '../../../hub/render/resample.ts'

// resample and dither take shortcuts (rows equal to the one before, white and black-and-white rows, two rows
// of error diffusion at once); each must give exactly the bytes of the plain computation below.

/** Box-filter resampling, one source dot at a time, rows across into a Float32Array, then down. */
function plainResample(page: GreyPage, width: number, height: number): Uint8Array {
  const weights = (sourceLength: number, targetLength: number) => {
    const step = sourceLength / targetLength
    return Array.from({ length: targetLength }, (_, i) => {
      const start = i * step
      const end = Math.min(sourceLength, start + step)
      const first = Math.floor(start)
      const w = new Float32Array(Math.max(1, Math.min(sourceLength, Math.ceil(end)) - first))
      for (let s = first; s < first + w.length; s++)
        w[s - first] = (Math.min(end, s + 1) - Math.max(start, s)) / step
      return { first, w }
    })
  }
  const across = weights(page.width, width)
  const down = weights(page.height, height)
  const rows = new Float32Array(page.height * width)
  for (let y = 0; y < page.height; y++)
    for (let x = 0; x < width; x++) {
      let sum = 0
      const { first, w } = across[x]!
      for (let k = 0; k < w.length; k++) sum += w[k]! * page.data[y * page.width + first + k]!
      rows[y * width + x] = sum
    }
  const out = new Uint8Array(width * height)
  for (let y = 0; y < height; y++)
    for (let x = 0; x < width; x++) {
      let sum = 0
      const { first, w } = down[y]!
      for (let k = 0; k < w.length; k++) sum += w[k]! * rows[(first + k) * width + x]!
      out[y * width + x] = Math.max(0, Math.min(255, Math.round(sum)))
    }
  return out
}

/** Floyd–Steinberg with the errors added into Float32Arrays, dot after dot. */
function plainDither(page: GreyPage): Uint8Array {
  const { width, height, data } = page
  const stride = bytesPerRow(width)
  const bits = new Uint8Array(stride * height)
  let current = new Float32Array(width + 2)
  let next = new Float32Array(width + 2)
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const value = data[y * width + x]! + current[x + 1]!
      const error = value < 128 ? value : value - 255
      if (value < 128) bits[y * stride + (x >> 3)]! |= 0x80 >> (x & 7)
      current[x + 2]! += (error * 7) / 16
      next[x]! += (error * 3) / 16
      next[x + 1]! += (error * 5) / 16
      next[x + 2]! += error / 16
    }
    current = next
    next = new Float32Array(width + 2)
  }
  return bits
}

/** A page of white rows, black-and-white rows, grey rows and repeated rows, from a fixed seed. */
function mixedPage(width: number, height: number, seed: number): GreyPage {
  let state = seed
  const random = () => {
    state = (state * 1103515245 + 12345) >>> 0
    return state / 2 ** 32
  }
  const data = new Uint8Array(width * height)
  for (let y = 0; y < height; y++) {
    const kind = random()
    for (let x = 0; x < width; x++) {
      const at = y * width + x
      if (y > 0 && kind < 0.3) data[at] = data[at - width]!
      else if (kind < 0.5) data[at] = 255
      else if (kind < 0.7) data[at] = random() < 0.5 ? 0 : 255
      else if (kind < 0.8) data[at] = random() < 0.6 ? 255 : Math.floor(random() * 256)
      else data[at] = Math.floor(random() * 256)
    }
  }
  return { width, height, data }
}

const SIZES: [number, number][] = [
  [1, 1],
  [1, 7],
  [9, 1],
  [13, 5],
  [64, 33],
  [201, 150],
  [639, 120],
  [300, 301],
]

it('resample gives the bytes of the plain box filter, scaling up and down', () => {
  for (const [i, [width, height]] of SIZES.entries()) {
    const page = mixedPage(width, height, i + 1)
    for (const [w, h] of [
      [Math.ceil(width * 0.9), Math.ceil(height * 0.9)],
      [Math.ceil(width / 3), Math.ceil(height / 2.5)],
      [width * 2 + 1, height + 3],
      [1, 1],
    ] as [number, number][])
      expect(Buffer.from(resample(page, w, h).data).equals(plainResample(page, w, h))).toBe(true)
  }
})

it('dither gives the bits of plain Floyd–Steinberg on rows of every kind, odd and even', () => {
  for (const [i, [width, height]] of SIZES.entries()) {
    const page = mixedPage(width, height, 100 + i)
    expect(Buffer.from(dither(page).data).equals(plainDither(page))).toBe(true)
  }
})
