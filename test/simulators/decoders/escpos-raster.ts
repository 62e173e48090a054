import { type Bitmap, createBitmap } from '../../../hub/languages/bitmap.ts'
import { decodeEscpos } from './escpos.ts'

/**
 * Turns an ESC/POS raster job back into its pages (Epson "ESC/POS Command Reference"): `ESC @`, then per
 * page `GS v 0` bands (stacked top to bottom) ended by a cut `GS V`. Widths come back as whole bytes (8 dots
 * per byte); anything else in the stream is an error, so a stray byte fails the test.
 */
export function decodeEscposRaster(bytes: Buffer): Bitmap[] {
  const tokens = decodeEscpos(bytes)
  const first = tokens.shift()
  if (first?.kind !== 'command' || first.name !== 'ESC @') throw new Error('an ESC/POS job starts with ESC @')
  const pages: Bitmap[] = []
  let bands: Array<{ widthBytes: number; rows: number; data: Buffer }> = []
  for (const token of tokens) {
    if (token.kind === 'command' && token.name === 'GS v 0') {
      const { bytes: command } = token
      if (command[3] !== 0) throw new Error(`GS v 0 with m = ${command[3]}, not 0 (normal)`)
      const widthBytes = command.readUInt16LE(4)
      const rows = command.readUInt16LE(6)
      if (command.length !== 8 + widthBytes * rows) throw new Error('a GS v 0 band is cut short')
      if (bands.length > 0 && bands[0]!.widthBytes !== widthBytes)
        throw new Error('bands of different widths')
      bands.push({ widthBytes, rows, data: command.subarray(8) })
    } else if (token.kind === 'command' && token.name === 'GS V') {
      if (bands.length === 0) throw new Error('a cut without a page')
      const height = bands.reduce((sum, band) => sum + band.rows, 0)
      const page = createBitmap(bands[0]!.widthBytes * 8, height)
      ;(page.data as Uint8Array).set(Buffer.concat(bands.map((band) => band.data)))
      pages.push(page)
      bands = []
    } else {
      throw new Error(`unexpected in a raster job: ${token.kind === 'command' ? token.name : token.text}`)
    }
  }
  if (bands.length > 0) throw new Error('the last page is not cut')
  return pages
}
