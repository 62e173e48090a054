import type { RawLanguage } from '../../protocol/enums.ts'
import { textSlip } from '../../protocol/text-slip.ts'
import { type AnyPrinterSpec, isIppPrinter } from '../printers/ipp-printer-uri.ts'
import type { PrinterSpec } from '../printers/printer-spec.ts'
import type { Transport } from '../transports/transport.ts'

/**
 * A short text job that shows the pairing code, in the printer's own language with its resident fonts (the
 * code is ASCII letters and a dash, printable by every one of them without a font download).
 */
export function pairingSlip(language: RawLanguage, code: string): Buffer {
  return Buffer.from(
    textSlip(language, {
      title: 'Printer hub pairing code',
      emphasis: code,
      note: 'Type it on the onboarding page.',
    }),
  )
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
