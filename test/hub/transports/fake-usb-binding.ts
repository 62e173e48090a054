import {
  USB_CLASS_PRINTER,
  USB_SUBCLASS_PRINTER,
  type UsbBinding,
  type UsbControlSetup,
  type UsbDeviceHandle,
  type UsbDeviceInfo,
  UsbError,
  type UsbInterfaceInfo,
} from '../../../hub/transports/usb-binding.ts'
import { ByteSink } from './byte-sink.ts'

export interface FakeUsbPrinterOptions {
  vendorId?: number
  productId?: number
  serialNumber?: string | null
  location?: string
  manufacturer?: string | null
  product?: string | null
  /** IEEE 1284 Device ID answered to GET_DEVICE_ID; null: the request stalls (as some printers do). */
  deviceId?: string | null
  /** bInterfaceProtocol 2 (with bulk IN) or 1 (OUT only). Default true. */
  bidirectional?: boolean
  /** Called with each bulk OUT transfer's bytes; may `reply` (a status request's answer). */
  responder?: (out: Buffer, printer: FakeUsbPrinter) => void
  /** Bytes a single bulk OUT transfer takes at most, like a printer's buffer (default 4096). */
  outLimit?: number
  /** Extra interfaces (e.g. a vendor or HID one) listed before the printer interface. */
  otherInterfaces?: UsbInterfaceInfo[]
}

/** A simulated USB printer: records bulk OUT, answers on bulk IN, answers GET_DEVICE_ID, can be unplugged. */
export class FakeUsbPrinter {
  readonly info: UsbDeviceInfo
  readonly received = new ByteSink()
  plugged = true
  kernelDriverDetached = false
  claimed = false
  readonly #options: FakeUsbPrinterOptions
  #in: Buffer[] = []
  #readers = new Set<() => void>()

  constructor(options: FakeUsbPrinterOptions) {
    this.#options = options
    const bidirectional = options.bidirectional ?? true
    this.info = {
      location: options.location ?? '1-1',
      vendorId: options.vendorId ?? 0x04b8,
      productId: options.productId ?? 0x0202,
      serialNumber: options.serialNumber === undefined ? 'FAKE0001' : options.serialNumber,
      manufacturer: options.manufacturer ?? null,
      product: options.product ?? null,
      configurationIndex: 0,
      interfaces: [
        ...(options.otherInterfaces ?? []),
        {
          interfaceNumber: options.otherInterfaces?.length ?? 0,
          alternateSetting: 0,
          interfaceClass: USB_CLASS_PRINTER,
          interfaceSubclass: USB_SUBCLASS_PRINTER,
          interfaceProtocol: bidirectional ? 2 : 1,
          endpoints: [
            { address: 0x01, direction: 'out', transferType: 'bulk', maxPacketSize: 64 },
            ...(bidirectional
              ? [
                  {
                    address: 0x82,
                    direction: 'in' as const,
                    transferType: 'bulk' as const,
                    maxPacketSize: 64,
                  },
                ]
              : []),
          ],
        },
      ],
    }
  }

  get deviceId(): string | null {
    return this.#options.deviceId ?? null
  }

  /** Queues bytes for bulk IN (printer → host). */
  reply(bytes: Buffer): void {
    this.#in.push(Buffer.from(bytes))
    for (const wake of this.#readers) wake()
  }

  unplug(): void {
    this.plugged = false
    for (const wake of this.#readers) wake()
  }

  out(data: Buffer): number {
    const taken = data.subarray(0, this.#options.outLimit ?? 4096)
    this.received.push(taken)
    this.#options.responder?.(Buffer.from(taken), this)
    return taken.length
  }

  /** Waits (like a libusb transfer with a timeout) for IN bytes. */
  async in(length: number, timeoutMs: number): Promise<Buffer> {
    if (this.#in.length === 0 && this.plugged) {
      await new Promise<void>((resolve) => {
        const wake = () => {
          clearTimeout(timer)
          this.#readers.delete(wake)
          resolve()
        }
        const timer = setTimeout(wake, timeoutMs)
        this.#readers.add(wake)
      })
    }
    if (!this.plugged) throw new UsbError('no_device', 'LIBUSB_TRANSFER_NO_DEVICE')
    const all = Buffer.concat(this.#in)
    this.#in = all.length > length ? [all.subarray(length)] : []
    return all.subarray(0, length)
  }
}

/** A UsbBinding over simulated printers; counts open handles so tests can check none is left. */
export class FakeUsbBinding implements UsbBinding {
  readonly printers: FakeUsbPrinter[] = []
  openHandles = 0
  /** Set to make listDevices fail (a host without a USB bus). */
  listError: Error | null = null

  add(options: FakeUsbPrinterOptions = {}): FakeUsbPrinter {
    const printer = new FakeUsbPrinter(options)
    this.printers.push(printer)
    return printer
  }

  async listDevices(filter: { interfaceClass?: number } = {}): Promise<UsbDeviceInfo[]> {
    if (this.listError) throw this.listError
    return this.printers
      .filter((p) => p.plugged)
      .filter(
        (p) =>
          filter.interfaceClass === undefined ||
          p.info.interfaces.some((i) => i.interfaceClass === filter.interfaceClass),
      )
      .map((p) => structuredClone(p.info))
  }

  async open(location: string): Promise<UsbDeviceHandle> {
    const printer = this.printers.find((p) => p.plugged && p.info.location === location)
    if (!printer) throw new UsbError('no_device', `no USB device at ${location}`)
    this.openHandles++
    let open = true
    const live = () => {
      if (!open) throw new UsbError('other', 'device handle is closed')
      if (!printer.plugged) throw new UsbError('no_device', 'LIBUSB_ERROR_NO_DEVICE')
    }
    return {
      claimInterface: async () => {
        live()
        if (printer.claimed) throw new UsbError('busy', 'LIBUSB_ERROR_BUSY')
        printer.kernelDriverDetached = true
        printer.claimed = true
      },
      releaseInterface: async () => {
        printer.claimed = false
      },
      controlTransferIn: async (setup: UsbControlSetup, length: number) => {
        live()
        // USB Printer Class 1.1 §4.2.1 GET_DEVICE_ID: 0xA1, request 0, length prefix big-endian.
        if (setup.requestType !== 0xa1 || setup.request !== 0 || printer.deviceId === null) {
          throw new UsbError('pipe', 'LIBUSB_ERROR_PIPE')
        }
        const text = Buffer.from(printer.deviceId, 'latin1')
        const reply = Buffer.concat([Buffer.from([(text.length + 2) >> 8, (text.length + 2) & 0xff]), text])
        return reply.subarray(0, length)
      },
      bulkOut: async (_endpoint: number, data: Buffer) => {
        live()
        await new Promise((resolve) => setImmediate(resolve))
        live()
        return printer.out(data)
      },
      bulkIn: async (_endpoint: number, length: number, timeoutMs: number) => {
        live()
        return printer.in(length, timeoutMs)
      },
      close: async () => {
        if (!open) return
        open = false
        printer.claimed = false
        this.openHandles--
      },
    }
  }
}
