import { SerialPort } from 'serialport'
import type { TransportSpec } from '../printers/printer-spec.ts'
import { OperationQueue } from './operation-queue.ts'
import { ReplyCollector } from './reply-collector.ts'
import { type Transport, TransportError } from './transport.ts'
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
export class SerialTransport implements Transport {
  readonly description: string
  readonly #spec: SerialSpec
  readonly #createPort: (options: SerialOpenOptions) => SerialPortLike
  readonly #queue = new OperationQueue()
  readonly #replies = new ReplyCollector()
  #port: SerialPortLike | null = null
  #lost: TransportError | null = null

  constructor(spec: SerialSpec, options: SerialTransportOptions = {}) {
    this.description = transportUri(spec)
    this.#spec = spec
    this.#createPort = options.createPort ?? ((o) => new SerialPort(o))
  }

  async open(): Promise<void> {
    if (this.#port && !this.#lost) return
    await this.close()
    this.#lost = null
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
    port.on('error', (error) => this.#lose(port, error))
    await new Promise<void>((resolve, reject) =>
      port.open((error) => (error ? reject(failed(error)) : resolve())),
    )
    port.on('data', (chunk) => this.#replies.push(chunk))
    port.on('close', (error) => this.#lose(port, error ?? new Error('port closed')))
    this.#port = port
  }

  write(bytes: Buffer): Promise<void> {
    return this.#queue.run(() => this.#write(bytes))
  }

  query(
    request: Buffer,
    options: { timeoutMs: number; isComplete: (reply: Buffer) => boolean },
  ): Promise<Buffer | null> {
    return this.#queue.run(async () => {
      this.#usable()
      return this.#replies.request(() => this.#write(request), options)
    })
  }

  async close(): Promise<void> {
    const port = this.#port
    this.#port = null
    if (!port) return
    this.#replies.fail(new TransportError('disconnected', `${this.description}: closed`))
    if (!port.isOpen) {
      port.removeAllListeners()
      return
    }
    await new Promise<void>((resolve) => port.close(() => resolve()))
    port.removeAllListeners()
    // Keep a listener: a late read error from the closed port must not become an uncaught 'error' event.
    port.on('error', () => {})
  }

  #usable(): SerialPortLike {
    if (this.#lost) throw this.#lost
    if (!this.#port) throw new TransportError('disconnected', `${this.description}: not open`)
    return this.#port
  }

  /**
   * The line went away (adapter unplugged, or EIO on a pty whose other end closed). node-serialport marks
   * a disconnect on `close` with `error.disconnected`; a read error arrives as an `error` event.
   */
  #lose(port: SerialPortLike, cause: Error): void {
    if (port !== this.#port || this.#lost) return
    this.#lost = new TransportError('disconnected', `${this.description}: ${cause.message}`, { cause })
    this.#replies.fail(this.#lost)
  }

  /**
   * Resolves after `drain` (tcdrain(3)): every byte has left the UART, not just Node's buffer. If the port
   * closes meanwhile (a hang-up noticed by the reader), node-serialport parks the drain until a reopen that
   * never comes, so the close settles it instead.
   */
  #write(bytes: Buffer): Promise<void> {
    const port = this.#usable()
    return new Promise<void>((resolve, reject) => {
      const failed = (error: Error) => {
        port.off('close', onClose)
        reject(
          this.#lost ??
            new TransportError('write_failed', `${this.description}: ${error.message}`, { cause: error }),
        )
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
    })
  }
}
