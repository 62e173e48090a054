import type { RawLanguage } from '../../protocol/enums.ts'

/**
 * The language a USB vendor's receipt and label printers speak out of the box, used only when the printer
 * does not say (no IEEE 1284 Device ID, or one without a command set). USB-IF vendor ids.
 */
const VENDOR_LANGUAGES = new Map<number, RawLanguage>([
  [0x04b8, 'escpos'], // Seiko Epson: TM series receipt printers
  [0x0a5f, 'zpl'], // Zebra Technologies
  [0x1203, 'tspl'], // TSC Auto ID Technology
])

export function languageOfUsbVendor(vendorId: number): RawLanguage | null {
  return VENDOR_LANGUAGES.get(vendorId) ?? null
}
