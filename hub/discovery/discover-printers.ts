import type { RawLanguage } from '../../protocol/enums.ts'
import { capabilitiesFor } from '../printers/default-capabilities.ts'
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

interface Found {
  key: string
  transport: TransportSpec
  deviceId: string | null
  vendorId: number | null
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
    if (uri.language) {
      printers.push({ ...printerSpecOf(uri, uri.language), languageSource: 'configured', deviceId: match?.deviceId ?? null })
    } else {
      const { language, source } = languageOf(match ?? { deviceId: null, vendorId: vendorOf(uri.transport) })
      printers.push({ ...printerSpecOf(uri, language ?? 'escpos'), languageSource: source, deviceId: match?.deviceId ?? null })
    }
  }
  for (const spec of deps.serialPorts ?? []) printers.push({ ...spec, languageSource: 'configured', deviceId: null })
  for (const f of found.sort((a, b) => (a.key < b.key ? -1 : 1))) {
    const { language, source } = languageOf(f)
    if (!language) {
      log.warn({ key: f.key, device_id: f.deviceId }, 'printer speaks no language this hub drives; left out')
      continue
    }
    printers.push({
      key: f.key,
      name: nameOf(f, language),
      language,
      transport: f.transport,
      capabilities: capabilitiesFor(language, { dpi: null, widthMm: null, heightMm: null }),
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
    const twin = id
      ? usb.find(
          (u) =>
            u.device.location === id.location ||
            (id.serialNumber !== null &&
              u.device.serialNumber === id.serialNumber &&
              u.device.vendorId === id.vendorId &&
              u.device.productId === id.productId),
        )
      : undefined
    if (twin) usb.splice(usb.indexOf(twin), 1)
    found.push({
      key: id ? printerKeyOf({ kind: 'usb', ...id }) : printerKeyOf({ kind: 'usblp', path }),
      transport: { kind: 'usblp', path },
      deviceId: info?.deviceId ?? twin?.deviceId ?? null,
      vendorId: id?.vendorId ?? null,
      label: twin ? label(twin.device) : null,
    })
  }
  for (const { device, deviceId } of usb) {
    const transport: TransportSpec = { ...device, kind: 'usb' }
    found.push({
      key: printerKeyOf(transport),
      transport: { kind: 'usb', vendorId: device.vendorId, productId: device.productId, serialNumber: device.serialNumber },
      deviceId,
      vendorId: device.vendorId,
      label: label(device),
    })
  }
  // Two printers of one model without serial numbers would share a key: tell them apart by USB port.
  for (const f of found) {
    const twins = found.filter((g) => g.key === f.key)
    if (twins.length > 1) twins.forEach((g, i) => Object.assign(g, { key: `${g.key}@${locationOf(g, usb) ?? i}` }))
  }
  return found
}

async function defaultUsbBinding(log: DiscoveryLogger): Promise<UsbBinding | null> {
  try {
    return (await import('../transports/usb-binding-libusb.ts')).libusbBinding()
  } catch (error) {
    log.warn({ err: error }, 'node-usb could not be loaded; no USB printers discovered')
    return null
  }
}

function locationOf(f: Found, usb: { device: { location: string; serialNumber: string | null } }[]): string | null {
  return f.transport.kind === 'usblp' ? f.transport.path : (usb.find((u) => u.device.serialNumber === null)?.device.location ?? null)
}

function vendorOf(transport: TransportSpec): number | null {
  return transport.kind === 'usb' ? transport.vendorId : null
}

function label(device: { manufacturer: string | null; product: string | null }): string | null {
  return [device.manufacturer, device.product].filter(Boolean).join(' ') || null
}

function languageOf(f: { deviceId: string | null; vendorId: number | null }): {
  language: RawLanguage | null
  source: LanguageSource
} {
  const id = f.deviceId === null ? null : parseDeviceId(f.deviceId)
  const spoken = id && languageOfDeviceId(id)
  if (spoken) return { language: spoken, source: 'device_id' }
  // A Device ID that lists command sets, none of them ours: not a receipt or label printer.
  if (id && id.commandSet.length > 0) return { language: null, source: 'device_id' }
  const byVendor = f.vendorId === null ? null : languageOfUsbVendor(f.vendorId)
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
  const a = uri.transport
  const b = f.transport
  if (a.kind === 'usblp' && b.kind === 'usblp') return a.path === b.path
  if (a.kind !== 'usb') return false
  const [vid, pid, serial] = f.key.replace(/@.*$/, '').split(':').slice(1)
  return (
    Number.parseInt(vid ?? '', 16) === a.vendorId &&
    Number.parseInt(pid ?? '', 16) === a.productId &&
    (a.serialNumber === null || a.serialNumber === serial)
  )
}
