import { type Bitmap, createBitmap } from '../../../hub/languages/bitmap.ts'
import type { PagePrint } from '../../../hub/languages/raster-job.ts'
import { decodeTspl } from './tspl.ts'

/**
 * Turns a TSPL raster job back into pages (TSC "TSPL/TSPL2 Programming Language"): each label is `SIZE`,
 * `GAP`, `CLS`, one `BITMAP 0,0,w,h,0,data` and `PRINT 1,n`. BITMAP's 1 bits are white, so the data is
 * inverted back to 1 = black; widths come back as whole bytes.
 */
export function decodeTsplRaster(bytes: Buffer): PagePrint[] {
  const commands = decodeTspl(bytes)
  const labels: PagePrint[] = []
  for (let at = 0; at < commands.length; at += 5) {
    const [size, gap, cls, bitmap, print] = commands.slice(at, at + 5)
    const names = [size, gap, cls, bitmap, print].map((c) => c?.command)
    if (names.join(' ') !== 'SIZE GAP CLS BITMAP PRINT')
      throw new Error(`not a raster label: ${names.join(' ')}`)
    const [x, y, widthBytes, height, mode] = bitmap!.args.split(',').map(Number)
    if (x !== 0 || y !== 0 || mode !== 0) throw new Error(`BITMAP ${bitmap!.args}: not at 0,0 in mode 0`)
    const page: Bitmap = createBitmap(widthBytes! * 8, height!)
    const data = page.data as Uint8Array
    bitmap!.data!.forEach((byte, i) => {
      data[i] = ~byte & 0xff
    })
    const printed = /^1\s*,\s*(\d+)$/.exec(print!.args)
    if (!printed) throw new Error(`PRINT ${print!.args}: not PRINT 1,n`)
    labels.push({ page, quantity: Number(printed[1]) })
  }
  return labels
}
