import { SerialPort } from 'serialport'
import type { TransportSpec } from '../printers/printer-spec.ts'
import { keepBothWakeUps } from './serial-poller-fix.ts'
import { type PrinterStream, type PrinterStreamEvents, StreamTransport } from './stream-transport.ts'
import { TransportError } from './transport.ts'
import { transportUri } from './transport-uri.ts'

type SerialSpec = Extract<TransportSpec, { kind: 'serial' }>
export type SerialOpenOptions = ConstructorParameters<typeof SerialPort>[0]

/**
 * The part of a node-serialport port this transport uses. `SerialPort` (the OS binding) and `SerialPortMock`
 * (its mock binding) both fit, so a test can inject either; modem-line calls (`set`, `get`) are left out on
 * purpose: they fail on a pty ("Inappropriate ioctl") and a printer needs none of them.
 */
export interface SerialPortLike {
  readonly isOpen: boolean
  open(callback: (error: Error | null) => void): void
  write(data: Buffer, callback?: (error: Error | null | undefined) => void): boolean
  drain(callback: (error: Error | null) => void): void
  close(callback?: (error: Error | null) => void): void
  on(event: 'data', listener: (chunk: Buffer) => void): unknown
  on(event: 'close', listener: (error?: Error & { disconnected?: boolean }) => void): unknown
  on(event: 'error', listener: (error: Error) => void): unknown
  off(event: 'close', listener: () => void): unknown
  removeAllListeners(): unknown
}

export interface SerialTransportOptions {
  /** Builds the port (not opened). Default: `new SerialPort(options)`, the OS binding. */
  createPort?: (options: SerialOpenOptions) => SerialPortLike
}

/** node-serialport open options for a spec: line settings and flow control, never auto-open. */
export function serialOpenOptions(spec: SerialSpec): SerialOpenOptions {
  return {
    path: spec.path,
    baudRate: spec.baudRate,
    dataBits: spec.dataBits,
    stopBits: spec.stopBits,
    parity: spec.parity,
    rtscts: spec.flowControl === 'rtscts',
    xon: spec.flowControl === 'xonxoff',
    xoff: spec.flowControl === 'xonxoff',
    autoOpen: false,
    // Exclusive access (flock LOCK_EX|LOCK_NB in bindings-cpp): another writer would corrupt a job.
    lock: true,
  }
}

/** A printer on a serial line (RS-232 or a USB-serial adapter) through node-serialport. */
export class SerialTransport extends StreamTransport {
  readonly #spec: SerialSpec
  readonly #createPort: (options: SerialOpenOptions) => SerialPortLike

  constructor(spec: SerialSpec, options: SerialTransportOptions = {}) {
    super(transportUri(spec))
    this.#spec = spec
    this.#createPort = options.createPort ?? ((o) => new SerialPort(o))
  }

  protected async openStream(events: PrinterStreamEvents): Promise<PrinterStream> {
    const failed = (error: Error) => {
      // node-serialport's lock is flock(2) LOCK_EX|LOCK_NB: "Cannot lock port" means another process has it.
      const kind = /lock|busy/i.test(error.message) ? 'busy' : 'unreachable'
      return new TransportError(kind, `${this.description}: ${error.message}`, { cause: error })
    }
    let port: SerialPortLike
    try {
      port = this.#createPort(serialOpenOptions(this.#spec))
    } catch (error) {
      throw failed(error as Error) // node-serialport validates options in the constructor
    }
    // The line went away (adapter unplugged, or EIO on a pty whose other end closed). node-serialport marks
    // a disconnect on `close` with `error.disconnected`; a read error arrives as an `error` event.
    port.on('error', (error) => events.lost(error.message, error))
    await new Promise<void>((resolve, reject) =>
      port.open((error) => (error ? reject(failed(error)) : resolve())),
    )
    keepBothWakeUps(port)
    port.on('data', (chunk) => events.data(chunk))
    port.on('close', (error) => {
      const cause = error ?? new Error('port closed')
      events.lost(cause.message, cause)
    })
    return serialStream(port)
  }
}

function serialStream(port: SerialPortLike): PrinterStream {
  return {
    /**
     * Resolves after `drain` (tcdrain(3)): every byte has left the UART, not just Node's buffer. If the port
     * closes meanwhile (a hang-up noticed by the reader), node-serialport parks the drain until a reopen
     * that never comes, so the close settles it instead.
     */
    write: (bytes) =>
      new Promise<void>((resolve, reject) => {
        const failed = (error: Error) => {
          port.off('close', onClose)
          reject(error)
        }
        const onClose = () => failed(new Error('port closed during the write'))
        port.on('close', onClose)
        port.write(bytes, (error) => {
          if (error) failed(error)
        })
        port.drain((error) => {
          if (error) return failed(error)
          port.off('close', onClose)
          resolve()
        })
      }),
    close: async () => {
      if (!port.isOpen) {
        port.removeAllListeners()
        return
      }
      await new Promise<void>((resolve) => port.close(() => resolve()))
      port.removeAllListeners()
      // Keep a listener: a late read error from the closed port must not become an uncaught 'error' event.
      port.on('error', () => {})
    },
    // node-serialport closes a lost port itself; what is left is released by `close`.
    abandon: () => {},
  }
}
