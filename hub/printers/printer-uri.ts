import { isIP } from 'node:net'
import { posix } from 'node:path'
import { RAW_LANGUAGES, type RawLanguage } from '../../protocol/enums.ts'
import {
  capabilitiesFor,
  headDotsFor,
  type MediaOptions,
  mediaDefaultsFor,
} from '../languages/capabilities.ts'
import { transportUri, usbIdHex } from '../transports/transport-uri.ts'
import type { PrinterSpec, TransportSpec } from './printer-spec.ts'
import { languageOfUsbVendor } from './usb-vendors.ts'

/**
 * Printer URIs (docs/running-a-hub.md), in the style of CUPS device URIs:
 *   socket://HOST[:PORT]                      raw TCP, port 9100 by default
 *   serial:/dev/ttyUSB0?baud=19200&parity=none&data_bits=8&stop_bits=1&flow=none|rtscts|xonxoff
 *   usblp:/dev/usb/lp0                        the Linux usblp character device
 *   usb://VID:PID[/SERIAL]                    libusb, e.g. usb://04b8:0202/X5E1234567
 * each with `language=escpos|zpl|tspl|cpcl` (required for socket and serial), `name=`, `dpi=`,
 * `width_mm=` (widest media: a receipt printer's paper), `height_mm=` (longest label) and `head_dots=` (dots
 * the head prints across, when not the usual for the paper: docs/pdf-printing.md).
 */
export class PrinterUriError extends Error {
  constructor(
    readonly uri: string,
    problem: string,
  ) {
    super(`printer URI ${JSON.stringify(uri)}: ${problem}`)
    this.name = 'PrinterUriError'
  }
}

/** How a printer's language was learnt; all but `configured` and `device_id` are guesses. */
export type LanguageSource = 'configured' | 'device_id' | 'vendor_id' | 'default'

/** A printer spec and where its language came from. */
export interface ResolvedPrinter extends PrinterSpec {
  languageSource: LanguageSource
}

/** What a URI says, validated; `language` is null only for usb and usblp URIs that leave it out. */
export interface PrinterUri extends MediaOptions {
  transport: TransportSpec
  key: string
  language: RawLanguage | null
  name: string | null
}

const MEDIA_OPTIONS = ['language', 'name', 'dpi', 'width_mm', 'height_mm', 'head_dots']
const SERIAL_OPTIONS = ['baud', 'parity', 'data_bits', 'stop_bits', 'flow']
const LANGUAGE_NAMES: Record<RawLanguage, string> = {
  escpos: 'ESC/POS',
  zpl: 'ZPL',
  tspl: 'TSPL',
  cpcl: 'CPCL',
}
/** Serial defaults: 9600 8N1 without flow control, the factory setting of most receipt printers. */
const SERIAL_DEFAULTS = {
  baudRate: 9600,
  dataBits: 8,
  stopBits: 1,
  parity: 'none',
  flowControl: 'none',
} as const

/** The printer's identity, from which its stable printer_id derives: the device, not its settings. */
export function printerKeyOf(transport: TransportSpec): string {
  if (transport.kind !== 'usb') return transportUri(transport)
  const serial = transport.serialNumber === null ? '' : `:${transport.serialNumber}`
  return `usb:${usbIdHex(transport.vendorId)}:${usbIdHex(transport.productId)}${serial}`
}

export function defaultPrinterName(language: RawLanguage, transport: TransportSpec): string {
  return `${LANGUAGE_NAMES[language]} printer at ${transportUri(transport)}`
}

/** The spec for a parsed URI once its language is known. */
export function printerSpecOf(parsed: PrinterUri, language: RawLanguage): PrinterSpec {
  return {
    key: parsed.key,
    name: parsed.name ?? defaultPrinterName(language, parsed.transport),
    language,
    transport: parsed.transport,
    capabilities: capabilitiesFor(language, parsed),
    headDots: headDotsFor(language, parsed),
  }
}

/**
 * Parses a printer URI into a complete spec. A usb or usblp URI without `language=` gets the one its USB
 * vendor is known for, else ESC/POS, marked by `languageSource` as a guess; discovery can do better.
 */
export function parsePrinterUri(uri: string): ResolvedPrinter {
  const parsed = readPrinterUri(uri)
  if (parsed.language) return { ...printerSpecOf(parsed, parsed.language), languageSource: 'configured' }
  const byVendor = parsed.transport.kind === 'usb' ? languageOfUsbVendor(parsed.transport.vendorId) : null
  return {
    ...printerSpecOf(parsed, byVendor ?? 'escpos'),
    languageSource: byVendor ? 'vendor_id' : 'default',
  }
}

/** Validates a printer URI and returns what it says, without filling in anything it leaves out. */
export function readPrinterUri(uri: string): PrinterUri {
  const fail = (problem: string): never => {
    throw new PrinterUriError(uri, problem)
  }
  const match = /^([a-z][a-z0-9+.-]*):([^?#]*)(?:\?([^#]*))?$/i.exec(uri.trim())
  if (!match) return fail('expected SCHEME:TARGET[?OPTIONS], e.g. socket://10.0.0.5:9100?language=zpl')
  const scheme = match[1]!.toLowerCase()
  const rest = match[2]!
  const query = new URLSearchParams(match[3] ?? '')
  const allowed = scheme === 'serial' ? [...MEDIA_OPTIONS, ...SERIAL_OPTIONS] : MEDIA_OPTIONS
  const options = new Map<string, string>()
  for (const [name, value] of query) {
    if (!allowed.includes(name)) return fail(`unknown option "${name}" (allowed: ${allowed.join(', ')})`)
    if (options.has(name)) return fail(`option "${name}" given twice`)
    options.set(name, value)
  }
  const transport = parseTarget(scheme, rest, options, fail)
  const language = parseLanguage(options.get('language'), fail)
  if (!language && (transport.kind === 'socket' || transport.kind === 'serial')) {
    return fail(`language= is required for ${transport.kind} printers (one of ${RAW_LANGUAGES.join(', ')})`)
  }
  const name = options.get('name')?.trim()
  if (name === '') return fail('name= is empty')
  return {
    transport,
    key: printerKeyOf(transport),
    language,
    name: name ?? null,
    dpi: number(options.get('dpi'), 'dpi', { min: 72, max: 2400, integer: true }, fail),
    widthMm: number(options.get('width_mm'), 'width_mm', { min: 1, max: 1000 }, fail),
    heightMm: number(options.get('height_mm'), 'height_mm', { min: 1, max: 10_000 }, fail),
    headDots: number(options.get('head_dots'), 'head_dots', { min: 8, max: 20_000, integer: true }, fail),
  }
}

type Fail = (problem: string) => never

function parseLanguage(value: string | undefined, fail: Fail): RawLanguage | null {
  if (value === undefined) return null
  const language = RAW_LANGUAGES.find((l) => l === value.toLowerCase())
  return language ?? fail(`language "${value}" is not one of ${RAW_LANGUAGES.join(', ')}`)
}

function number(
  value: string | undefined,
  option: string,
  range: { min: number; max: number; integer?: boolean },
  fail: Fail,
): number | null {
  if (value === undefined) return null
  const n = /^\d+(\.\d+)?$/.test(value) ? Number(value) : Number.NaN
  if (!(n >= range.min && n <= range.max) || (range.integer && !Number.isInteger(n))) {
    return fail(
      `${option}=${value} is not ${range.integer ? 'a whole number' : 'a number'} from ${range.min} to ${range.max}`,
    )
  }
  return n
}

function devicePath(rest: string, scheme: string, fail: Fail): string {
  let path: string
  try {
    path = decodeURIComponent(rest.startsWith('//') ? rest.slice(2) : rest)
  } catch {
    return fail('bad percent-encoding in the device path')
  }
  if (!path.startsWith('/') || path.includes('\0'))
    return fail(`${scheme}: needs an absolute device path, e.g. ${scheme}:/dev/…`)
  return posix.normalize(path)
}

function parseTarget(scheme: string, rest: string, options: Map<string, string>, fail: Fail): TransportSpec {
  switch (scheme) {
    case 'socket':
      return parseSocket(rest, fail)
    case 'usblp':
      return { kind: 'usblp', path: devicePath(rest, scheme, fail) }
    case 'serial':
      return parseSerial(devicePath(rest, scheme, fail), options, fail)
    case 'usb':
      return parseUsb(rest, fail)
    default:
      return fail(`unsupported scheme "${scheme}:" (use socket://, serial:, usblp: or usb://)`)
  }
}

function parseSocket(rest: string, fail: Fail): TransportSpec {
  const m = /^\/\/(\[[0-9a-f:.]+\]|[^/:[\]]+)(?::(\d*))?\/?$/i.exec(rest)
  if (!m) return fail('expected socket://HOST[:PORT]')
  const host = m[1]!.replace(/^\[(.*)\]$/, '$1').toLowerCase()
  if (
    m[1]!.startsWith('[')
      ? isIP(host) !== 6
      : !/^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$/.test(host)
  ) {
    return fail(`"${host}" is not a host name or IP address`)
  }
  const port = m[2] ? Number(m[2]) : 9100
  if (!(port >= 1 && port <= 65535)) return fail(`port ${m[2]} is not from 1 to 65535`)
  return { kind: 'socket', host, port }
}

function parseUsb(rest: string, fail: Fail): TransportSpec {
  const m = /^\/\/([0-9a-f]{4}):([0-9a-f]{4})(?:\/([^/]+))?\/?$/i.exec(rest)
  if (!m) return fail('expected usb://VID:PID[/SERIAL] with four hex digits each, e.g. usb://04b8:0202')
  let serialNumber: string | null = null
  try {
    serialNumber = m[3] === undefined ? null : decodeURIComponent(m[3])
  } catch {
    return fail('bad percent-encoding in the serial number')
  }
  return {
    kind: 'usb',
    vendorId: Number.parseInt(m[1]!, 16),
    productId: Number.parseInt(m[2]!, 16),
    serialNumber,
  }
}

function parseSerial(path: string, options: Map<string, string>, fail: Fail): TransportSpec {
  const pick = <T extends string | number>(option: string, values: readonly T[], fallback: T): T => {
    const raw = options.get(option)
    if (raw === undefined) return fallback
    const found = values.find((v) => String(v) === raw.toLowerCase())
    return found ?? fail(`${option}=${raw} is not one of ${values.join(', ')}`)
  }
  const baud = number(options.get('baud'), 'baud', { min: 50, max: 4_000_000, integer: true }, fail)
  return {
    kind: 'serial',
    path,
    baudRate: baud ?? SERIAL_DEFAULTS.baudRate,
    dataBits: pick('data_bits', [5, 6, 7, 8] as const, SERIAL_DEFAULTS.dataBits),
    stopBits: pick('stop_bits', [1, 1.5, 2] as const, SERIAL_DEFAULTS.stopBits),
    parity: pick('parity', ['none', 'even', 'odd', 'mark', 'space'] as const, SERIAL_DEFAULTS.parity),
    flowControl: pick('flow', ['none', 'rtscts', 'xonxoff'] as const, SERIAL_DEFAULTS.flowControl),
  }
}

/**
 * The URI of a spec, for display and configuration: parsing it gives the same spec back. Options that
 * equal their defaults are left out, except the language and a serial line's settings.
 */
export function printerUriOf(spec: PrinterSpec): string {
  const query = new URLSearchParams()
  const t = spec.transport
  if (t.kind === 'serial') {
    query.set('baud', String(t.baudRate))
    query.set('parity', t.parity)
    query.set('data_bits', String(t.dataBits))
    query.set('stop_bits', String(t.stopBits))
    query.set('flow', t.flowControl)
  }
  query.set('language', spec.language)
  if (spec.name !== defaultPrinterName(spec.language, t)) query.set('name', spec.name)
  const defaults = mediaDefaultsFor(spec.language)
  const caps = spec.capabilities
  const dpi = caps.dpi[0]
  if (dpi !== undefined && dpi !== defaults.dpi) query.set('dpi', String(dpi))
  if (caps.media_width_mm.max !== defaults.width.max) query.set('width_mm', String(caps.media_width_mm.max))
  const height = caps.media_height_mm
  if (height && height.max !== defaults.height?.max) query.set('height_mm', String(height.max))
  const media = {
    dpi: dpi ?? null,
    widthMm: caps.media_width_mm.max,
    heightMm: height?.max ?? null,
    headDots: null,
  }
  if (spec.headDots !== headDotsFor(spec.language, media)) query.set('head_dots', String(spec.headDots))
  return `${transportUri(t)}?${query.toString().replaceAll('+', '%20')}`
}
