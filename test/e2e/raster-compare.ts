import { execFile } from 'node:child_process'
import { readdir, readFile, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { promisify } from 'node:util'
import { type Bitmap, bytesPerRow } from '../../hub/languages/bitmap.ts'
import { tempDir } from '../helpers/temp-dir.ts'

// The reference a printed page is judged against: Ghostscript's own 1-bit raster of the PDF (the `gs` CLI,
// not the hub's render worker), and a measure of how much two 1-bit pages agree.

const run = promisify(execFile)

/**
 * Parses a binary PBM file (netpbm "P4": `P4`, width, height, each after whitespace or `#` comment lines,
 * one whitespace byte, then rows of ceil(width / 8) bytes, MSB = leftmost dot, 1 = black) into a Bitmap,
 * clearing the padding bits after each row's last dot.
 */
export function parsePbm(file: Buffer): Bitmap {
  if (file.toString('latin1', 0, 2) !== 'P4') throw new Error('not a binary PBM (P4) file')
  let at = 2
  const numbers: number[] = []
  while (numbers.length < 2) {
    const byte = file[at]
    if (byte === undefined) throw new Error('PBM header cut short')
    if (byte === 0x23) {
      // '#': a comment up to the end of the line
      const end = file.indexOf(0x0a, at)
      if (end === -1) throw new Error('PBM comment cut short')
      at = end + 1
    } else if (/\s/.test(String.fromCharCode(byte))) {
      at++
    } else {
      const match = /^\d+/.exec(file.toString('latin1', at, at + 12))
      if (!match) throw new Error(`PBM header: unexpected byte ${byte}`)
      numbers.push(Number(match[0]))
      at += match[0].length
    }
  }
  // exactly one whitespace byte ends the header
  at++
  const [width, height] = numbers as [number, number]
  if (width < 1 || height < 1) throw new Error(`a PBM page of ${width} × ${height} dots`)
  const stride = bytesPerRow(width)
  if (file.length < at + stride * height) throw new Error('PBM rows cut short')
  const data = new Uint8Array(file.subarray(at, at + stride * height))
  const spare = stride * 8 - width
  if (spare > 0) for (let row = 1; row <= height; row++) data[row * stride - 1]! &= (0xff << spare) & 0xff
  return { width, height, data }
}

/**
 * Ghostscript's raster of every page of `pdf` at `dpi` (default 203), one Bitmap per page in order:
 * `gs -q -dSAFER -dBATCH -dNOPAUSE -sDEVICE=pbmraw -r<dpi> -sOutputFile=page-%d.pbm file.pdf`. Rejects when
 * Ghostscript fails or renders no page.
 */
export async function ghostscriptPages(pdf: Buffer, dpi = 203): Promise<Bitmap[]> {
  const dir = tempDir('e2e-gs-')
  try {
    const input = path.join(dir.path, 'document.pdf')
    await writeFile(input, pdf)
    await run(
      'gs',
      [
        '-q',
        '-dSAFER',
        '-dBATCH',
        '-dNOPAUSE',
        '-sDEVICE=pbmraw',
        `-r${dpi}`,
        `-sOutputFile=${path.join(dir.path, 'page-%d.pbm')}`,
        input,
      ],
      { env: Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('GS_'))) },
    )
    const numbers = (await readdir(dir.path))
      .map((name) => /^page-(\d+)\.pbm$/.exec(name)?.[1])
      .filter((n): n is string => n !== undefined)
      .map(Number)
      .sort((a, b) => a - b)
    // Ghostscript without -dPDFSTOPONERROR ends well on a broken file, having rendered nothing
    if (numbers.length === 0) throw new Error('Ghostscript rendered no pages')
    numbers.forEach((n, i) => {
      if (n !== i + 1) throw new Error(`Ghostscript wrote pages ${numbers.join(', ')}`)
    })
    const pages: Bitmap[] = []
    for (const n of numbers) pages.push(parsePbm(await readFile(path.join(dir.path, `page-${n}.pbm`))))
    return pages
  } finally {
    dir.remove()
  }
}

const POPCOUNT = Uint8Array.from({ length: 256 }, (_, byte) => {
  let count = 0
  for (let b = byte; b; b >>= 1) count += b & 1
  return count
})

/** Byte `i` of row `y`, dots beyond the bitmap (right of its width, below its height) white. */
function byteAt(bitmap: Bitmap, y: number, i: number): number {
  if (y >= bitmap.height || i * 8 >= bitmap.width) return 0
  const value = bitmap.data[y * bytesPerRow(bitmap.width) + i]!
  const spare = (i + 1) * 8 - bitmap.width
  return spare > 0 ? value & (0xff << spare) & 0xff : value
}

/** How two pages agree, dot by dot over the larger of their sizes (dots outside a bitmap are white). */
export interface Comparison {
  /** |black in both| / |black in either|; 1 when neither has a black dot. */
  overlap: number
  both: number
  either: number
  blackA: number
  blackB: number
}

export function compareBitmaps(a: Bitmap, b: Bitmap): Comparison {
  const width = Math.max(a.width, b.width)
  const height = Math.max(a.height, b.height)
  const stride = bytesPerRow(width)
  let both = 0
  let either = 0
  let blackA = 0
  let blackB = 0
  for (let y = 0; y < height; y++) {
    for (let i = 0; i < stride; i++) {
      const x = byteAt(a, y, i)
      const z = byteAt(b, y, i)
      both += POPCOUNT[x & z]!
      either += POPCOUNT[x | z]!
      blackA += POPCOUNT[x]!
      blackB += POPCOUNT[z]!
    }
  }
  return { overlap: either === 0 ? 1 : both / either, both, either, blackA, blackB }
}

/** |black in both| / |black in either|, over the larger of the two sizes (see compareBitmaps). */
export function overlap(a: Bitmap, b: Bitmap): number {
  return compareBitmaps(a, b).overlap
}

/** One line for an assertion message: the sizes, the black dots of each and the overlap. */
export function describeComparison(printed: Bitmap, reference: Bitmap): string {
  const c = compareBitmaps(printed, reference)
  return (
    `printed ${printed.width} × ${printed.height} dots (${c.blackA} black), reference ` +
    `${reference.width} × ${reference.height} (${c.blackB} black): overlap ${c.overlap.toFixed(4)}`
  )
}
