import { readdir, readFile, realpath } from 'node:fs/promises'
import path from 'node:path'

/** What the kernel knows about a /dev/usb/lpN device. */
export interface UsblpDeviceInfo {
  /** The IEEE 1284 Device ID usblp read when the printer was plugged in; null when it gave none. */
  deviceId: string | null
  /** The USB device behind it; null when sysfs does not say. */
  usb: { vendorId: number; productId: number; serialNumber: string | null; location: string } | null
}

/** The usblp devices present: `/dev/usb/lp0`, `/dev/usb/lp1`, … in number order; none when /dev/usb is absent. */
export async function listUsblpDevices(dir = '/dev/usb'): Promise<string[]> {
  const names = await readdir(dir).catch(() => [] as string[])
  return names
    .filter((name) => /^lp\d+$/.test(name))
    .sort((a, b) => Number(a.slice(2)) - Number(b.slice(2)))
    .map((name) => path.join(dir, name))
}

async function text(file: string): Promise<string | null> {
  const value = await readFile(file, 'utf8').catch(() => null)
  return value === null ? null : value.trim() || null
}

/**
 * Reads sysfs for a usblp device. usblp exposes the Device ID it fetched at probe time as the interface
 * attribute `ieee1284_id` (drivers/usb/class/usblp.c), which stands in for the LPIOC_GET_DEVICE_ID ioctl
 * that Node cannot issue without a native addon. `/sys/class/usbmisc/lpN/device` links to the interface
 * (`1-1.2:1.0`); its parent is the USB device (`1-1.2`) with idVendor, idProduct and serial.
 * Null when sysfs has no such device (no /sys, as in a container).
 */
export async function readUsblpSysfs(devicePath: string, sysfs = '/sys'): Promise<UsblpDeviceInfo | null> {
  const name = path.basename(devicePath)
  const iface = await realpath(path.join(sysfs, 'class', 'usbmisc', name, 'device')).catch(() => null)
  if (iface === null) return null
  const device = path.dirname(iface)
  const [deviceId, vendor, product, serialNumber] = await Promise.all([
    text(path.join(iface, 'ieee1284_id')),
    text(path.join(device, 'idVendor')),
    text(path.join(device, 'idProduct')),
    text(path.join(device, 'serial')),
  ])
  const usb =
    vendor && product && /^[0-9a-f]{4}$/i.test(vendor) && /^[0-9a-f]{4}$/i.test(product)
      ? {
          vendorId: Number.parseInt(vendor, 16),
          productId: Number.parseInt(product, 16),
          serialNumber,
          location: path.basename(device),
        }
      : null
  return { deviceId, usb }
}
