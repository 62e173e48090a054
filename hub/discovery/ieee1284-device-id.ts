import type { RawLanguage } from '../../protocol/enums.ts'
import type { UsbDeviceHandle, UsbDeviceInfo } from '../transports/usb-binding.ts'

/**
 * The IEEE 1284 Device ID (IEEE 1284-2000 §7.6): `KEY:value;KEY:value;…`, e.g.
 * `MFG:EPSON;CMD:ESC/POS;MDL:TM-T20II;CLS:PRINTER;`. Keys are matched without regard to case; the short
 * forms MFG, MDL, CMD stand for MANUFACTURER, MODEL, COMMAND SET.
 */
export interface DeviceId {
  manufacturer: string | null
  model: string | null
  /** The command set (`CMD:`) entries, in the device's order. */
  commandSet: string[]
  fields: Map<string, string>
}

const ALIASES: Record<string, string> = { MANUFACTURER: 'MFG', MODEL: 'MDL', 'COMMAND SET': 'CMD' }

export function parseDeviceId(text: string): DeviceId {
  const fields = new Map<string, string>()
  for (const entry of text.split(';')) {
    const colon = entry.indexOf(':')
    if (colon <= 0) continue
    const key = entry.slice(0, colon).trim().toUpperCase()
    fields.set(ALIASES[key] ?? key, entry.slice(colon + 1).trim())
  }
  const commands = fields.get('CMD')
  return {
    manufacturer: fields.get('MFG') || null,
    model: fields.get('MDL') || null,
    commandSet: commands
      ? commands
          .split(',')
          .map((c) => c.trim())
          .filter(Boolean)
      : [],
    fields,
  }
}

/**
 * Command-set names as printers report them, compared upper-case without punctuation or spaces. ESC/P
 * and ESC/P2 (`ESCP2`, `ESCPL2`: Epson's page-printer languages) are not ESC/POS and stay unmatched; so do
 * EPL (Zebra's older label language), PCL and PostScript, which this hub does not speak.
 */
const COMMAND_LANGUAGES: Record<string, RawLanguage> = {
  ESCPOS: 'escpos',
  ZPL: 'zpl',
  ZPL2: 'zpl',
  ZPLII: 'zpl',
  TSPL: 'tspl',
  TSPL2: 'tspl',
  CPCL: 'cpcl',
}

/** The first command set the hub speaks, or null when the printer names none of them. */
export function languageOfDeviceId(id: DeviceId): RawLanguage | null {
  for (const command of id.commandSet) {
    const language = COMMAND_LANGUAGES[command.toUpperCase().replace(/[^A-Z0-9]/g, '')]
    if (language) return language
  }
  return null
}

/**
 * The reply to GET_DEVICE_ID (USB Printer Class 1.1 §4.2.1): a two-byte big-endian length that counts
 * itself, then the ID. Some printers send the length little-endian or too large (CUPS' usb backend copes
 * the same way); the text is cut at what actually arrived.
 */
export function decodeDeviceIdReply(reply: Buffer): string | null {
  if (reply.length < 2) return null
  let length = reply.readUInt16BE(0)
  if (length < 2 || length > reply.length) length = reply.readUInt16LE(0)
  if (length < 2 || length > reply.length) length = reply.length
  const text = reply.subarray(2, length).toString('latin1').replace(/\0.*$/s, '').trim()
  return text === '' ? null : text
}

/**
 * Asks an opened device for its Device ID with the printer class request GET_DEVICE_ID: bmRequestType
 * 0xA1 (device-to-host, class, interface), bRequest 0, wValue the configuration index, wIndex the
 * interface number in the high byte and the alternate setting in the low byte, up to 1023 bytes (Printer
 * Class 1.1 §4.2.1). Linux lets this through even while usblp holds the interface (usbfs
 * check_ctrlrecip special-cases it), so no kernel driver has to be detached. Null when it stalls.
 */
export async function readDeviceId(
  handle: UsbDeviceHandle,
  device: UsbDeviceInfo,
  iface: { interfaceNumber: number; alternateSetting: number },
): Promise<string | null> {
  const setup = {
    requestType: 0xa1,
    request: 0,
    value: device.configurationIndex,
    index: (iface.interfaceNumber << 8) | iface.alternateSetting,
  }
  return decodeDeviceIdReply(await handle.controlTransferIn(setup, 1023))
}
