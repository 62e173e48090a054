import type { RawLanguage } from '../../protocol/enums.ts'
import { ESC_AT, FEED_AND_CUT } from '../languages/escpos.ts'
import { type AnyPrinterSpec, isIppPrinter } from '../printers/ipp-printer-uri.ts'
import type { PrinterSpec } from '../printers/printer-spec.ts'
import type { Transport } from '../transports/transport.ts'

const TITLE = 'Printer hub pairing code'
const HINT = 'Type it on the onboarding page.'

/**
 * A short text job that shows the pairing code, in the printer's own language with its resident fonts (the
 * code is ASCII letters and a dash, printable by every one of them without a font download).
 */
export function pairingSlip(language: RawLanguage, code: string): Buffer {
  switch (language) {
    case 'escpos':
      // ESC a 1: centred; GS ! 0x11: double width and height (ESC/POS Command Reference).
      return Buffer.concat([
        ESC_AT,
        Buffer.from('\x1ba\x01', 'latin1'),
        Buffer.from(`${TITLE}\n\n`, 'latin1'),
        Buffer.from('\x1d!\x11', 'latin1'),
        Buffer.from(`${code}\n`, 'latin1'),
        Buffer.from('\x1d!\x00', 'latin1'),
        Buffer.from(`\n${HINT}\n\n\n`, 'latin1'),
        FEED_AND_CUT,
      ])
    case 'zpl':
      // ^A0N,h,w: the scalable resident font at h×w dots (ZPL II Programming Guide).
      return Buffer.from(
        `^XA^FO30,30^A0N,30,30^FD${TITLE}^FS^FO30,80^A0N,70,70^FD${code}^FS^FO30,170^A0N,25,25^FD${HINT}^FS^XZ\n`,
        'latin1',
      )
    case 'tspl':
      // TEXT x,y,"font",rotation,x-mul,y-mul,"content" (TSPL/TSPL2 Programming Manual).
      return Buffer.from(
        `CLS\r\nTEXT 30,30,"3",0,1,1,"${TITLE}"\r\nTEXT 30,80,"4",0,2,2,"${code}"\r\nTEXT 30,170,"2",0,1,1,"${HINT}"\r\nPRINT 1\r\n`,
        'latin1',
      )
    case 'cpcl':
      // ! offset hres vres height qty, then TEXT font size x y (CPCL Programming Manual).
      return Buffer.from(
        `! 0 200 200 260 1\r\nTEXT 4 0 30 30 ${TITLE}\r\nTEXT 4 1 30 90 ${code}\r\nTEXT 7 0 30 200 ${HINT}\r\nPRINT\r\n`,
        'latin1',
      )
  }
}

/** The first receipt or label printer (raw language) among the hub's printers; IPP office printers are skipped. */
export function firstRawPrinter(printers: readonly AnyPrinterSpec[]): PrinterSpec | undefined {
  return printers.find((spec): spec is PrinterSpec => !isIppPrinter(spec))
}

/** Prints the code on `printer`: opens its transport, writes the slip, closes it. */
export async function printPairingCode(
  printer: PrinterSpec,
  transport: Transport,
  code: string,
): Promise<void> {
  try {
    await transport.open()
    await transport.write(pairingSlip(printer.language, code))
  } finally {
    await transport.close()
  }
}
