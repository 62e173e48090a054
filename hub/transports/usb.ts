import type { TransportSpec } from '../printers/printer-spec.ts'
import { OperationQueue } from './operation-queue.ts'
import {
  type QueryOptions,
  replyAtTimeout,
  type Transport,
  TransportError,
  type TransportErrorKind,
} from './transport.ts'
import { transportUri } from './transport-uri.ts'
import {
  USB_CLASS_PRINTER,
  USB_PRINTER_PROTOCOL,
  type UsbBinding,
  type UsbDeviceHandle,
  type UsbDeviceInfo,
  UsbError,
  type UsbInterfaceInfo,
} from './usb-binding.ts'

type UsbSpec = Extract<TransportSpec, { kind: 'usb' }>

export interface UsbTransportOptions {
  /** Bytes per bulk OUT transfer (default 16 KiB); `close` can interrupt a write between two. */
  chunkBytes?: number
  /** Timeout of one bulk OUT transfer; on expiry the part the printer took is kept and the rest retried. */
  transferTimeoutMs?: number
  /** Timeout of the bulk IN reads that drop stale bytes before a query (default 5 ms). */
  drainTimeoutMs?: number
}

/** The printer-class interface to use and its bulk endpoints. */
export interface PrinterInterface {
  interfaceNumber: number
  alternateSetting: number
  bulkOut: number
  /** Absent on unidirectional printers (protocol 1): they cannot answer status. */
  bulkIn: number | null
  bulkInPacketSize: number
}

/**
 * Picks the printer interface (USB Printer Class 1.1 §4.1: class 7, subclass 1) with a bulk OUT endpoint,
 * preferring bidirectional (protocol 2, has bulk IN for status) over unidirectional (1) and over IEEE
 * 1284.4 (3, whose channel protocol we do not speak, though its setting usually carries plain bulk pipes).
 */
export function printerInterfaceOf(device: UsbDeviceInfo): PrinterInterface | null {
  const preference: number[] = [USB_PRINTER_PROTOCOL.bidirectional, USB_PRINTER_PROTOCOL.unidirectional]
  const rank = (i: UsbInterfaceInfo) => {
    const at = preference.indexOf(i.interfaceProtocol)
    return at === -1 ? preference.length : at
  }
  const candidates = device.interfaces
    .filter((i) => i.interfaceClass === USB_CLASS_PRINTER)
    .filter((i) => i.endpoints.some((e) => e.direction === 'out' && e.transferType === 'bulk'))
    .sort((a, b) => rank(a) - rank(b))
  const chosen = candidates[0]
  if (!chosen) return null
  const out = chosen.endpoints.find((e) => e.direction === 'out' && e.transferType === 'bulk')!
  const inp = chosen.endpoints.find((e) => e.direction === 'in' && e.transferType === 'bulk')
  return {
    interfaceNumber: chosen.interfaceNumber,
    alternateSetting: chosen.alternateSetting,
    bulkOut: out.address,
    bulkIn: inp?.address ?? null,
    bulkInPacketSize: inp?.maxPacketSize || 64,
  }
}

/** The attached device a spec names: same vendor and product, and same serial number when it has one. */
export function findUsbDevice(devices: UsbDeviceInfo[], spec: UsbSpec): UsbDeviceInfo | undefined {
  return devices.find(
    (d) =>
      d.vendorId === spec.vendorId &&
      d.productId === spec.productId &&
      (spec.serialNumber === null || d.serialNumber === spec.serialNumber),
  )
}

/**
 * A USB printer driven through libusb (node-usb) rather than the kernel's usblp: its printer-class
 * interface is claimed (detaching usblp if bound), jobs go to bulk OUT and status replies come from bulk IN.
 */
export class UsbTransport implements Transport {
  readonly description: string
  readonly #spec: UsbSpec
  readonly #binding: UsbBinding
  readonly #chunkBytes: number
  readonly #transferTimeoutMs: number
  readonly #drainTimeoutMs: number
  readonly #queue = new OperationQueue()
  #handle: UsbDeviceHandle | null = null
  #iface: PrinterInterface | null = null
  #lost: TransportError | null = null
  #closing = false

  constructor(spec: UsbSpec, binding: UsbBinding, options: UsbTransportOptions = {}) {
    this.description = transportUri(spec)
    this.#spec = spec
    this.#binding = binding
    this.#chunkBytes = options.chunkBytes ?? 16 * 1024
    this.#transferTimeoutMs = options.transferTimeoutMs ?? 1000
    this.#drainTimeoutMs = options.drainTimeoutMs ?? 5
  }

  async open(): Promise<void> {
    if (this.#handle && !this.#lost) return
    await this.close()
    this.#lost = null
    this.#closing = false
    const device = await this.#binding
      .listDevices({ interfaceClass: USB_CLASS_PRINTER })
      .then((devices) => findUsbDevice(devices, this.#spec))
      .catch((error: unknown) => {
        throw this.#error('unreachable', error)
      })
    if (!device)
      throw new TransportError('unreachable', `${this.description}: no such USB printer is attached`)
    const iface = printerInterfaceOf(device)
    if (!iface) {
      throw new TransportError('unreachable', `${this.description}: no printer-class interface with bulk OUT`)
    }
    const handle = await this.#binding.open(device.location).catch((error: unknown) => {
      throw this.#error('unreachable', error)
    })
    try {
      await handle.claimInterface(iface.interfaceNumber, iface.alternateSetting)
    } catch (error) {
      await handle.close().catch(() => {})
      throw this.#error('unreachable', error)
    }
    this.#handle = handle
    this.#iface = iface
  }

  write(bytes: Buffer): Promise<void> {
    return this.#queue.run(() => this.#write(bytes))
  }

  query(request: Buffer, options: QueryOptions): Promise<Buffer | null> {
    return this.#queue.run(async () => {
      const { handle, iface } = this.#usable()
      if (iface.bulkIn === null) return null
      const size = iface.bulkInPacketSize * 8 // whole packets, so a transfer never overflows (libusb docs)
      for (let i = 0; i < 16; i++) {
        const stale = await this.#read(handle, iface.bulkIn, size, this.#drainTimeoutMs)
        if (stale.length === 0) break
      }
      await this.#write(request)
      const deadline = performance.now() + options.timeoutMs
      const chunks: Buffer[] = []
      for (;;) {
        const left = Math.ceil(deadline - performance.now())
        if (left <= 0 || this.#closing) return replyAtTimeout(chunks, options)
        const chunk = await this.#read(handle, iface.bulkIn, size, Math.min(left, 100))
        if (chunk.length === 0) continue
        chunks.push(chunk)
        const reply = Buffer.concat(chunks)
        if (options.isComplete(reply)) return reply
      }
    })
  }

  async close(): Promise<void> {
    const handle = this.#handle
    if (!handle) return
    this.#closing = true
    await this.#queue.idle()
    this.#handle = null
    if (this.#iface) await handle.releaseInterface(this.#iface.interfaceNumber).catch(() => {})
    await handle.close().catch(() => {})
  }

  #usable(): { handle: UsbDeviceHandle; iface: PrinterInterface } {
    if (this.#lost) throw this.#lost
    if (!this.#handle || !this.#iface || this.#closing) {
      throw new TransportError('disconnected', `${this.description}: not open`)
    }
    return { handle: this.#handle, iface: this.#iface }
  }

  #error(otherwise: TransportErrorKind, error: unknown): TransportError {
    const code = error instanceof UsbError ? error.code : 'other'
    const message = `${this.description}: ${(error as Error).message}`
    if (code === 'busy') return new TransportError('busy', message, { cause: error })
    if (code === 'access') {
      return new TransportError('unreachable', `${message} (no permission on the device: add a udev rule)`, {
        cause: error,
      })
    }
    if (code !== 'no_device') return new TransportError(otherwise, message, { cause: error })
    this.#lost ??= new TransportError('disconnected', `${this.description}: unplugged`, { cause: error })
    return this.#lost
  }

  async #read(handle: UsbDeviceHandle, endpoint: number, size: number, timeoutMs: number): Promise<Buffer> {
    try {
      return await handle.bulkIn(endpoint, size, timeoutMs)
    } catch (error) {
      throw this.#error('disconnected', error)
    }
  }

  /** Hands the bytes to bulk OUT in chunks; each transfer completing means the printer took those bytes. */
  async #write(bytes: Buffer): Promise<void> {
    const { handle, iface } = this.#usable()
    let offset = 0
    while (offset < bytes.length) {
      if (this.#closing)
        throw new TransportError('write_failed', `${this.description}: closed during a write`)
      const chunk = bytes.subarray(offset, offset + this.#chunkBytes)
      try {
        offset += await handle.bulkOut(iface.bulkOut, chunk, this.#transferTimeoutMs)
      } catch (error) {
        throw this.#error('write_failed', error)
      }
    }
  }
}
