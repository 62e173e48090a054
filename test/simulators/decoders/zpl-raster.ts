import { inflateSync } from 'node:zlib'
import { type Bitmap, bytesPerRow, createBitmap } from '../../../hub/languages/bitmap.ts'
import { crc16Xmodem } from '../../../hub/languages/crc16-xmodem.ts'
import type { PagePrint } from '../../../hub/languages/raster-job.ts'
import { decodeZpl, type ZplCommand, zplLabels } from './zpl.ts'

const Z64 = /^A,(\d+),(\d+),(\d+),:Z64:([A-Za-z0-9+/=]+):([0-9A-Fa-f]{4})$/

/**
 * Turns ZPL labels made of one `^GFA` Z64 graphic field back into pages (ZPL II Programming Guide ^GF): the
 * CRC-16 is checked, the data inflated, and the width taken from `^PW` when it fits the bytes per row.
 */
export function decodeZplRaster(bytes: Buffer): PagePrint[] {
  return zplLabels(decodeZpl(bytes)).map(decodeLabel)
}

function decodeLabel(label: ZplCommand[]): PagePrint {
  const param = (name: string) => {
    const found = label.filter((c) => c.command === name)
    if (found.length !== 1) throw new Error(`a label has one ${name}, not ${found.length}`)
    return found[0]!.params
  }
  if (param('^FO') !== '0,0') throw new Error(`the graphic is at ^FO${param('^FO')}, not 0,0`)
  const match = Z64.exec(param('^GF'))
  if (!match) throw new Error(`not a ^GFA Z64 field: ^GF${param('^GF').slice(0, 40)}`)
  const [, binaryCount, fieldCount, rowBytes, base64, crc] = match
  if (Number.parseInt(crc!, 16) !== crc16Xmodem(Buffer.from(base64!, 'latin1')))
    throw new Error('bad Z64 CRC')
  const data = inflateSync(Buffer.from(base64!, 'base64'))
  if (data.length !== Number(binaryCount) || data.length !== Number(fieldCount))
    throw new Error(`^GF says ${binaryCount}/${fieldCount} bytes, the data holds ${data.length}`)
  const widthBytes = Number(rowBytes)
  const height = data.length / widthBytes
  const printWidth = Number(param('^PW'))
  const width = bytesPerRow(printWidth) === widthBytes ? printWidth : widthBytes * 8
  if (Number(param('^LL')) !== height) throw new Error(`^LL${param('^LL')} for ${height} rows`)
  const page: Bitmap = createBitmap(width, height)
  ;(page.data as Uint8Array).set(data)
  return { page, quantity: Number(param('^PQ')) }
}
