import { type Bitmap, createBitmap } from '../../../hub/languages/bitmap.ts'
import type { PagePrint } from '../../../hub/languages/raster-job.ts'
import { decodeCpcl } from './cpcl.ts'

/**
 * Turns a CPCL raster job back into pages (Zebra "Mobile Printer CPCL Programming Manual"): each label is
 * `! 0 200 200 height qty`, one `EG width height 0 0 hex`, `FORM` and `PRINT`. Widths come back as whole
 * bytes.
 */
export function decodeCpclRaster(bytes: Buffer): PagePrint[] {
  const commands = decodeCpcl(bytes)
  const labels: PagePrint[] = []
  for (let at = 0; at < commands.length; at += 4) {
    const [header, graphics, form, print] = commands.slice(at, at + 4)
    const names = [header, graphics, form, print].map((c) => c?.command)
    if (names.join(' ') !== '! EG FORM PRINT') throw new Error(`not a raster label: ${names.join(' ')}`)
    const [offset, hres, vres, labelHeight, quantity] = header!.args.split(/\s+/).map(Number)
    if (offset !== 0 || hres !== 200 || vres !== 200) throw new Error(`header ! ${header!.args}`)
    const [widthBytes, height, x, y, hex] = graphics!.args.split(/\s+/)
    if (x !== '0' || y !== '0') throw new Error(`EG at ${x} ${y}, not 0 0`)
    if (Number(height) !== labelHeight) throw new Error(`EG of ${height} rows on a ${labelHeight}-dot label`)
    if (!/^[0-9A-F]*$/.test(hex ?? '') || hex!.length !== 2 * Number(widthBytes) * Number(height))
      throw new Error('EG data is not width × height bytes of upper-case hexadecimal')
    const page: Bitmap = createBitmap(Number(widthBytes) * 8, Number(height))
    ;(page.data as Uint8Array).set(Buffer.from(hex!, 'hex'))
    labels.push({ page, quantity: quantity! })
  }
  return labels
}
