import { readFile } from 'node:fs/promises'
import { type Device, getDeviceList, usb as libusb } from 'usb'
import {
  type UsbBinding,
  type UsbControlSetup,
  type UsbDeviceHandle,
  type UsbDeviceInfo,
  type UsbEndpointInfo,
  UsbError,
  type UsbErrorCode,
} from './usb-binding.ts'

const TRANSFER_TYPES = ['control', 'isochronous', 'bulk', 'interrupt'] as const

/** Maps a node-usb error: libusb_error codes (sync calls) and libusb_transfer_status (async transfers). */
function usbError(error: unknown, what: string): UsbError {
  if (error instanceof UsbError) return error
  const errno = (error as { errno?: number } | undefined)?.errno
  // Transfer statuses (libusb_transfer_status) are positive, libusb_error codes negative.
  const transfer = errno !== undefined && errno > 0
  const code: UsbErrorCode = transfer
    ? errno === libusb.LIBUSB_TRANSFER_NO_DEVICE
      ? 'no_device'
      : errno === libusb.LIBUSB_TRANSFER_TIMED_OUT
        ? 'timeout'
        : errno === libusb.LIBUSB_TRANSFER_STALL
          ? 'pipe'
          : 'io'
    : (({
        [libusb.LIBUSB_ERROR_NO_DEVICE]: 'no_device',
        [libusb.LIBUSB_ERROR_NOT_FOUND]: 'not_found',
        [libusb.LIBUSB_ERROR_ACCESS]: 'access',
        [libusb.LIBUSB_ERROR_BUSY]: 'busy',
        [libusb.LIBUSB_ERROR_TIMEOUT]: 'timeout',
        [libusb.LIBUSB_ERROR_PIPE]: 'pipe',
        [libusb.LIBUSB_ERROR_IO]: 'io',
      }[errno ?? 0] ?? 'other') as UsbErrorCode)
  return new UsbError(code, `${what}: ${(error as Error).message}`, { cause: error })
}

function locationOf(device: Device): string {
  return `${device.busNumber}-${(device.portNumbers ?? []).join('.') || device.deviceAddress}`
}

function describe(device: Device): Omit<UsbDeviceInfo, 'serialNumber' | 'manufacturer' | 'product'> {
  const config = device.configDescriptor
  const index = device.allConfigDescriptors.findIndex(
    (c) => c.bConfigurationValue === config?.bConfigurationValue,
  )
  return {
    location: locationOf(device),
    vendorId: device.deviceDescriptor.idVendor,
    productId: device.deviceDescriptor.idProduct,
    configurationIndex: Math.max(index, 0),
    interfaces: (config?.interfaces ?? []).flat().map((i) => ({
      interfaceNumber: i.bInterfaceNumber,
      alternateSetting: i.bAlternateSetting,
      interfaceClass: i.bInterfaceClass,
      interfaceSubclass: i.bInterfaceSubClass,
      interfaceProtocol: i.bInterfaceProtocol,
      endpoints: i.endpoints.map(
        (e): UsbEndpointInfo => ({
          address: e.bEndpointAddress,
          direction: e.bEndpointAddress & libusb.LIBUSB_ENDPOINT_IN ? 'in' : 'out',
          transferType: TRANSFER_TYPES[e.bmAttributes & 0x03] ?? 'bulk',
          maxPacketSize: e.wMaxPacketSize,
        }),
      ),
    })),
  }
}

/** String descriptors as Linux already read them (sysfs, readable without opening the device). */
async function sysfsString(location: string, name: string): Promise<string | null> {
  const text = await readFile(`/sys/bus/usb/devices/${location}/${name}`, 'utf8').catch(() => null)
  return text === null ? null : text.trim() || null
}

function stringDescriptor(device: Device, index: number): Promise<string | null> {
  if (!index) return Promise.resolve(null)
  return new Promise((resolve) =>
    device.getStringDescriptor(index, (error, value) => resolve(error ? null : (value ?? null))),
  )
}

/** Strings from sysfs, else by opening the device (needs write access to /dev/bus/usb/BBB/DDD). */
async function strings(device: Device, location: string) {
  const d = device.deviceDescriptor
  const [serialNumber, manufacturer, product] = await Promise.all([
    sysfsString(location, 'serial'),
    sysfsString(location, 'manufacturer'),
    sysfsString(location, 'product'),
  ])
  if (serialNumber !== null || !d.iSerialNumber) return { serialNumber, manufacturer, product }
  try {
    device.open(false)
  } catch {
    return { serialNumber, manufacturer, product }
  }
  try {
    return {
      serialNumber: await stringDescriptor(device, d.iSerialNumber),
      manufacturer: manufacturer ?? (await stringDescriptor(device, d.iManufacturer)),
      product: product ?? (await stringDescriptor(device, d.iProduct)),
    }
  } finally {
    device.close()
  }
}

function transfer(device: Device, endpoint: number, timeoutMs: number, buffer: Buffer, what: string) {
  return new Promise<{ error: unknown; actual: number }>((resolve, reject) => {
    try {
      new libusb.Transfer(
        device,
        endpoint,
        libusb.LIBUSB_TRANSFER_TYPE_BULK,
        timeoutMs,
        (error, _b, actual) => resolve({ error, actual }),
      ).submit(buffer)
    } catch (error) {
      reject(usbError(error, what))
    }
  })
}

class LibusbHandle implements UsbDeviceHandle {
  constructor(readonly device: Device) {}

  async claimInterface(interfaceNumber: number, alternateSetting: number): Promise<void> {
    try {
      const iface = this.device.interface(interfaceNumber)
      if (iface.isKernelDriverActive()) iface.detachKernelDriver()
      iface.claim()
      if (alternateSetting !== 0) await iface.setAltSettingAsync(alternateSetting)
    } catch (error) {
      throw usbError(error, `claim interface ${interfaceNumber}`)
    }
  }

  async releaseInterface(interfaceNumber: number): Promise<void> {
    await this.device
      .interface(interfaceNumber)
      .releaseAsync()
      .catch((error: unknown) => {
        throw usbError(error, `release interface ${interfaceNumber}`)
      })
  }

  controlTransferIn(setup: UsbControlSetup, length: number): Promise<Buffer> {
    return new Promise((resolve, reject) => {
      try {
        this.device.controlTransfer(
          setup.requestType,
          setup.request,
          setup.value,
          setup.index,
          length,
          (e, data) =>
            e
              ? reject(usbError(e, 'control transfer'))
              : resolve(Buffer.isBuffer(data) ? data : Buffer.alloc(0)),
        )
      } catch (error) {
        reject(usbError(error, 'control transfer'))
      }
    })
  }

  async bulkOut(endpoint: number, data: Buffer, timeoutMs: number): Promise<number> {
    const { error, actual } = await transfer(this.device, endpoint, timeoutMs, data, 'bulk OUT')
    if (error && usbError(error, '').code !== 'timeout') throw usbError(error, 'bulk OUT')
    return actual
  }

  async bulkIn(endpoint: number, length: number, timeoutMs: number): Promise<Buffer> {
    const buffer = Buffer.alloc(length)
    const { error, actual } = await transfer(this.device, endpoint, timeoutMs, buffer, 'bulk IN')
    if (error && usbError(error, '').code !== 'timeout') throw usbError(error, 'bulk IN')
    return buffer.subarray(0, actual)
  }

  async close(): Promise<void> {
    try {
      this.device.close()
    } catch (error) {
      throw usbError(error, 'close')
    }
  }
}

/** The UsbBinding over node-usb 2.x (libusb-1.0). */
export function libusbBinding(): UsbBinding {
  return {
    async listDevices(filter = {}) {
      const found: UsbDeviceInfo[] = []
      for (const device of getDeviceList()) {
        let info: ReturnType<typeof describe>
        try {
          info = describe(device)
        } catch {
          continue // unplugged while listing, or no readable configuration
        }
        const { interfaceClass } = filter
        if (interfaceClass !== undefined && !info.interfaces.some((i) => i.interfaceClass === interfaceClass))
          continue
        found.push({ ...info, ...(await strings(device, info.location)) })
      }
      return found
    },
    async open(location) {
      const device = getDeviceList().find((d) => locationOf(d) === location)
      if (!device) throw new UsbError('no_device', `no USB device at ${location}`)
      try {
        device.open()
      } catch (error) {
        throw usbError(error, `open ${location}`)
      }
      return new LibusbHandle(device)
    },
  }
}
