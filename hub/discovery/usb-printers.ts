import { printerInterfaceOf } from '../transports/usb.ts'
import { USB_CLASS_PRINTER, type UsbBinding, type UsbDeviceInfo } from '../transports/usb-binding.ts'
import { readDeviceId } from './ieee1284-device-id.ts'

export interface UsbPrinterFound {
  device: UsbDeviceInfo
  /** IEEE 1284 Device ID from GET_DEVICE_ID, null when the printer gave none or could not be asked. */
  deviceId: string | null
}

export interface DiscoveryLogger {
  debug(details: object, message: string): void
  warn(details: object, message: string): void
}

/**
 * The attached USB printers (an interface of class 7 with bulk OUT, USB Printer Class 1.1 §4.1), each with
 * its Device ID when the printer answers GET_DEVICE_ID. Never throws: a host without a USB bus, or a
 * device that cannot be opened (permissions), yields what could be found.
 */
export async function findUsbPrinters(binding: UsbBinding, log: DiscoveryLogger): Promise<UsbPrinterFound[]> {
  let devices: UsbDeviceInfo[]
  try {
    devices = await binding.listDevices({ interfaceClass: USB_CLASS_PRINTER })
  } catch (error) {
    log.warn({ err: error }, 'USB devices could not be listed; no USB printers discovered')
    return []
  }
  const found: UsbPrinterFound[] = []
  for (const device of devices) {
    const iface = printerInterfaceOf(device)
    if (!iface) continue
    found.push({ device, deviceId: await askDeviceId(binding, device, iface, log) })
  }
  return found
}

async function askDeviceId(
  binding: UsbBinding,
  device: UsbDeviceInfo,
  iface: { interfaceNumber: number; alternateSetting: number },
  log: DiscoveryLogger,
): Promise<string | null> {
  try {
    const handle = await binding.open(device.location)
    try {
      return await readDeviceId(handle, device, iface)
    } finally {
      await handle.close()
    }
  } catch (error) {
    log.debug({ err: error, location: device.location }, 'no IEEE 1284 Device ID from USB printer')
    return null
  }
}
