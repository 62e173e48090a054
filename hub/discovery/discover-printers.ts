import type { RawLanguage } from '../../protocol/enums.ts'
import { capabilitiesFor, headDotsFor, type MediaOptions } from '../languages/capabilities.ts'
import type { PrinterSpec, TransportSpec } from '../printers/printer-spec.ts'
import {
  defaultPrinterName,
  type LanguageSource,
  type PrinterUri,
  printerKeyOf,
  printerSpecOf,
  type ResolvedPrinter,
  readPrinterUri,
} from '../printers/printer-uri.ts'
import { languageOfUsbVendor } from '../printers/usb-vendors.ts'
import type { UsbBinding } from '../transports/usb-binding.ts'
import { languageOfDeviceId, parseDeviceId } from './ieee1284-device-id.ts'
import { type DiscoveryLogger, findUsbPrinters } from './usb-printers.ts'
import { listUsblpDevices, readUsblpSysfs, type UsblpDeviceInfo } from './usblp-devices.ts'

export interface DiscoveryDeps {
  /** libusb access; default node-usb, loaded on first use; null skips USB devices. */
  usb?: UsbBinding | null
  /** The usblp device paths; default `/dev/usb/lp*`. */
  listUsblp?: () => Promise<string[]>
  /** What the kernel knows of a usblp device; default sysfs (`readUsblpSysfs`). */
  usblpInfo?: (path: string) => Promise<UsblpDeviceInfo | null>
  /** Printer URIs from configuration (`--printer`): they win over a discovered printer on the same device. */
  configured?: string[]
  /** Serial printers: only ever from configuration, since probing a serial line could print garbage. */
  serialPorts?: PrinterSpec[]
  logger?: DiscoveryLogger
}

/** A printer the hub found or was told about, with where its language came from. */
export interface DiscoveredPrinter extends ResolvedPrinter {
  /** The IEEE 1284 Device ID the printer reported, if any. */
  deviceId: string | null
}

const SILENT: DiscoveryLogger = { debug() {}, warn() {} }
/** A discovered printer says nothing about its media: its language's defaults apply. */
const NO_MEDIA_OPTIONS: MediaOptions = { dpi: null, widthMm: null, heightMm: null, headDots: null }

type UsbIdentity = { vendorId: number; productId: number; serialNumber: string | null }

interface Found {
  key: string
  transport: TransportSpec
  /** The USB device behind it, when known. */
  usb: UsbIdentity | null
  /** Where it is plugged (USB port path), to tell apart two printers of one model without serial numbers. */
  location: string | null
  deviceId: string | null
  /** USB strings, for a name when the Device ID has none. */
  label: string | null
}

/**
 * The printers this hub drives: configured ones, USB printer-class devices (through libusb) and usblp
 * devices (/dev/usb/lpN), whatever is present. Never throws for missing hardware or buses.
 *
 * Identity (`key`, from which the stable printer_id derives) is the USB device's `usb:VID:PID:SERIAL`
 * wherever it is known, so a printer keeps its id across restarts and replugs into another port. A usblp
 * device whose USB identity sysfs does not give keeps its path (`usblp:/dev/usb/lp0`), which is only
 * stable while the set of USB printers does not change. A device seen both through libusb and as usblp is
 * one printer, driven through usblp: the kernel driver already holds it, and claiming it with libusb would
 * detach that driver from under anyone else using it.
 *
 * Language: the Device ID's command set (`device_id`), else what the USB vendor is known for (`vendor_id`),
 * else ESC/POS as a guess (`default`); a `language=` in a configured URI beats all. A printer whose Device
 * ID lists only languages the hub does not speak (an office printer: PCL, PostScript, ESC/P2) is left out.
 */
export async function discoverPrinters(deps: DiscoveryDeps = {}): Promise<DiscoveredPrinter[]> {
  const log = deps.logger ?? SILENT
  const configured = (deps.configured ?? []).map((uri) => readPrinterUri(uri))
  const found = await findAll(deps, log)
  const printers: DiscoveredPrinter[] = []
  for (const uri of configured) {
    const match = found.find((f) => sameDevice(uri, f))
    if (match) found.splice(found.indexOf(match), 1)
    const deviceId = match?.deviceId ?? null
    const learnt = languageOf(deviceId, match?.usb?.vendorId ?? vendorOf(uri.transport))
    const [language, languageSource]: [RawLanguage, LanguageSource] = uri.language
      ? [uri.language, 'configured']
      : learnt.language
        ? [learnt.language, learnt.source]
        : ['escpos', 'default']
    printers.push({ ...printerSpecOf(uri, language), languageSource, deviceId })
  }
  for (const spec of deps.serialPorts ?? [])
    printers.push({ ...spec, languageSource: 'configured', deviceId: null })
  for (const f of found.sort((a, b) => (a.key < b.key ? -1 : 1))) {
    const { language, source } = languageOf(f.deviceId, f.usb?.vendorId ?? null)
    if (!language) {
      log.warn({ key: f.key, device_id: f.deviceId }, 'printer speaks no language this hub drives; left out')
      continue
    }
    printers.push({
      key: f.key,
      name: nameOf(f, language),
      language,
      transport: f.transport,
      capabilities: capabilitiesFor(language, NO_MEDIA_OPTIONS),
      headDots: headDotsFor(language, NO_MEDIA_OPTIONS),
      languageSource: source,
      deviceId: f.deviceId,
    })
  }
  return printers
}

async function findAll(deps: DiscoveryDeps, log: DiscoveryLogger): Promise<Found[]> {
  const binding = deps.usb === undefined ? await defaultUsbBinding(log) : deps.usb
  const usb = binding ? await findUsbPrinters(binding, log) : []
  const paths = await (deps.listUsblp ?? (() => listUsblpDevices()))().catch(() => [] as string[])
  const found: Found[] = []
  for (const path of paths) {
    const info = await (deps.usblpInfo ?? readUsblpSysfs)(path).catch(() => null)
    const id = info?.usb ?? null
    const twin =
      id &&
      usb.find(
        (u) => u.device.location === id.location || (id.serialNumber !== null && sameUsb(u.device, id)),
      )
    if (twin) usb.splice(usb.indexOf(twin), 1)
    const identity = id && { vendorId: id.vendorId, productId: id.productId, serialNumber: id.serialNumber }
    found.push({
      key: printerKeyOf(identity ? { kind: 'usb', ...identity } : { kind: 'usblp', path }),
      transport: { kind: 'usblp', path },
      usb: identity,
      location: id?.location ?? null,
      deviceId: info?.deviceId ?? twin?.deviceId ?? null,
      label: twin ? label(twin.device) : null,
    })
  }
  for (const { device, deviceId } of usb) {
    const identity = {
      vendorId: device.vendorId,
      productId: device.productId,
      serialNumber: device.serialNumber,
    }
    const transport: TransportSpec = { kind: 'usb', ...identity }
    found.push({
      key: printerKeyOf(transport),
      transport,
      usb: identity,
      location: device.location,
      deviceId,
      label: label(device),
    })
  }
  // Two printers of one model without serial numbers would share a key: tell them apart by USB port.
  for (const f of found) {
    const twins = found.filter((g) => g.key === f.key)
    if (twins.length > 1) for (const [i, g] of twins.entries()) g.key = `${g.key}@${g.location ?? i}`
  }
  return found
}

function sameUsb(a: UsbIdentity, b: UsbIdentity): boolean {
  return a.vendorId === b.vendorId && a.productId === b.productId && a.serialNumber === b.serialNumber
}

async function defaultUsbBinding(log: DiscoveryLogger): Promise<UsbBinding | null> {
  try {
    return (await import('../transports/usb-binding-libusb.ts')).libusbBinding()
  } catch (error) {
    log.warn({ err: error }, 'node-usb could not be loaded; no USB printers discovered')
    return null
  }
}

function vendorOf(transport: TransportSpec): number | null {
  return transport.kind === 'usb' ? transport.vendorId : null
}

function label(device: { manufacturer: string | null; product: string | null }): string | null {
  return [device.manufacturer, device.product].filter(Boolean).join(' ') || null
}

function languageOf(
  deviceId: string | null,
  vendorId: number | null,
): { language: RawLanguage | null; source: LanguageSource } {
  const id = deviceId === null ? null : parseDeviceId(deviceId)
  const spoken = id && languageOfDeviceId(id)
  if (spoken) return { language: spoken, source: 'device_id' }
  // A Device ID that lists command sets, none of them ours: not a receipt or label printer.
  if (id && id.commandSet.length > 0) return { language: null, source: 'device_id' }
  const byVendor = vendorId === null ? null : languageOfUsbVendor(vendorId)
  if (byVendor) return { language: byVendor, source: 'vendor_id' }
  return { language: 'escpos', source: 'default' }
}

function nameOf(f: Found, language: RawLanguage): string {
  const id = f.deviceId === null ? null : parseDeviceId(f.deviceId)
  const fromId = [id?.manufacturer, id?.model].filter(Boolean).join(' ')
  return fromId || f.label || defaultPrinterName(language, f.transport)
}

/** Whether a configured URI names the same device as a discovered printer. */
function sameDevice(uri: PrinterUri, f: Found): boolean {
  if (uri.key === f.key) return true
  const t = uri.transport
  if (t.kind === 'usblp') return f.transport.kind === 'usblp' && f.transport.path === t.path
  if (t.kind !== 'usb' || !f.usb) return false
  return sameUsb(f.usb, { ...t, serialNumber: t.serialNumber ?? f.usb.serialNumber })
}
