/**
 * The few libusb operations the USB printer transport and discovery need, behind an interface so that they
 * run against a fake in tests (there is no USB bus here) and against node-usb (`usb-binding-libusb.ts`) on a
 * hub. Shapes follow the USB 2.0 descriptors (USB 2.0 §9.6) without libusb's naming.
 */

/** USB class code of printers (USB Printer Class 1.1 §4.1: bInterfaceClass 7, bInterfaceSubClass 1). */
export const USB_CLASS_PRINTER = 7
export const USB_SUBCLASS_PRINTER = 1
/** bInterfaceProtocol (Printer Class 1.1 §4.1): 1 unidirectional, 2 bidirectional, 3 IEEE 1284.4. */
export const USB_PRINTER_PROTOCOL = { unidirectional: 1, bidirectional: 2, ieee1284_4: 3 } as const

export interface UsbEndpointInfo {
  /** bEndpointAddress, direction bit included (0x81 is IN endpoint 1). */
  address: number
  direction: 'in' | 'out'
  transferType: 'control' | 'isochronous' | 'bulk' | 'interrupt'
  maxPacketSize: number
}

export interface UsbInterfaceInfo {
  interfaceNumber: number
  alternateSetting: number
  interfaceClass: number
  interfaceSubclass: number
  interfaceProtocol: number
  endpoints: UsbEndpointInfo[]
}

export interface UsbDeviceInfo {
  /** Where it is plugged: bus and port path (`1-1.4`), the name Linux gives it under /sys/bus/usb/devices. */
  location: string
  vendorId: number
  productId: number
  /** iSerialNumber's string, null when the device has none or it could not be read. */
  serialNumber: string | null
  manufacturer: string | null
  product: string | null
  /** Zero-based index of the active configuration (wValue of GET_DEVICE_ID). */
  configurationIndex: number
  /** Every interface and alternate setting of the active configuration. */
  interfaces: UsbInterfaceInfo[]
}

/** A control request's setup stage (USB 2.0 §9.3). */
export interface UsbControlSetup {
  requestType: number
  request: number
  value: number
  index: number
}

/** An opened device. Methods reject with `UsbError`. */
export interface UsbDeviceHandle {
  /** Claims the interface (detaching a kernel driver such as usblp first) and selects the setting. */
  claimInterface(interfaceNumber: number, alternateSetting: number): Promise<void>
  releaseInterface(interfaceNumber: number): Promise<void>
  /** Device-to-host control transfer; resolves with what the device sent (at most `length` bytes). */
  controlTransferIn(setup: UsbControlSetup, length: number): Promise<Buffer>
  /**
   * Bulk OUT; resolves with how many bytes the device took, which is less than `data.length` when the
   * timeout passed first (a busy printer), never an error for that.
   */
  bulkOut(endpoint: number, data: Buffer, timeoutMs: number): Promise<number>
  /** Bulk IN; resolves with what arrived, empty when nothing did within the timeout. */
  bulkIn(endpoint: number, length: number, timeoutMs: number): Promise<Buffer>
  close(): Promise<void>
}

export interface UsbBinding {
  /**
   * The attached devices. With `interfaceClass`, only those with an interface of that class, which is also
   * all that gets opened to read string descriptors (serial number) when the OS does not expose them.
   */
  listDevices(filter?: { interfaceClass?: number }): Promise<UsbDeviceInfo[]>
  /** Opens the device at `location`; rejects with UsbError 'no_device' when nothing is there. */
  open(location: string): Promise<UsbDeviceHandle>
}

/** libusb's error classes (libusb_error), named. */
export type UsbErrorCode = 'no_device' | 'not_found' | 'access' | 'busy' | 'timeout' | 'pipe' | 'io' | 'other'

export class UsbError extends Error {
  constructor(
    readonly code: UsbErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options)
    this.name = 'UsbError'
  }
}
