import { OperationQueue } from './operation-queue.ts'
import { ReplyCollector } from './reply-collector.ts'
import { type QueryOptions, type Transport, TransportError } from './transport.ts'

/** An open duplex byte stream to a printer, as one transport opened it (a TCP socket, a serial port). */
export interface PrinterStream {
  /**
   * Sends bytes; resolves once they are as far as this kind of stream can tell (the kernel for TCP, out of
   * the UART for serial). Rejects with a TransportError, or with the stream's own Error (a write failure).
   */
  write(bytes: Buffer): Promise<void>
  /** Closes it without losing queued bytes; resolves once closed. Called at most once. */
  close(): Promise<void>
  /** The stream was lost: release it at once. */
  abandon(): void
}

/** What an opened stream reports to its transport. */
export interface PrinterStreamEvents {
  /** Bytes from the printer. */
  data(chunk: Buffer): void
  /** The printer went away or the stream broke. */
  lost(message: string, cause?: unknown): void
}

/**
 * The skeleton of a transport over a duplex stream (TCP, serial): one operation at a time (OperationQueue),
 * status replies collected from the stream's data events (ReplyCollector), and a lost stream turned into a
 * `disconnected` TransportError for every later call until `open` again. A subclass says only how its
 * stream is opened, written and closed (`openStream`).
 */
export abstract class StreamTransport implements Transport {
  readonly description: string
  readonly #queue = new OperationQueue()
  readonly #replies = new ReplyCollector()
  #stream: PrinterStream | null = null
  #lost: TransportError | null = null

  constructor(description: string) {
    this.description = description
  }

  /** Opens the stream; rejects with a TransportError (`unreachable`, `busy`) when it cannot. */
  protected abstract openStream(events: PrinterStreamEvents): Promise<PrinterStream>

  async open(): Promise<void> {
    if (this.#stream && !this.#lost) return
    await this.close()
    this.#lost = null
    let opened: PrinterStream | null = null
    const stream = await this.openStream({
      data: (chunk) => this.#replies.push(chunk),
      lost: (message, cause) => {
        if (opened !== null && opened === this.#stream) this.#lose(opened, message, cause)
      },
    })
    opened = stream
    this.#stream = stream
  }

  write(bytes: Buffer): Promise<void> {
    return this.#queue.run(() => this.#write(bytes))
  }

  query(request: Buffer, options: QueryOptions): Promise<Buffer | null> {
    return this.#queue.run(async () => {
      this.#usable()
      return this.#replies.request(() => this.#write(request), options)
    })
  }

  async close(): Promise<void> {
    const stream = this.#stream
    this.#stream = null
    if (!stream) return
    this.#replies.fail(new TransportError('disconnected', `${this.description}: closed`))
    await stream.close()
  }

  #usable(): PrinterStream {
    if (this.#lost) throw this.#lost
    if (!this.#stream) throw new TransportError('disconnected', `${this.description}: not open`)
    return this.#stream
  }

  #lose(stream: PrinterStream, message: string, cause?: unknown): void {
    if (this.#lost) return
    this.#lost = new TransportError('disconnected', `${this.description}: ${message}`, { cause })
    this.#replies.fail(this.#lost)
    stream.abandon()
  }

  async #write(bytes: Buffer): Promise<void> {
    const stream = this.#usable()
    try {
      await stream.write(bytes)
    } catch (error) {
      if (this.#lost) throw this.#lost
      if (error instanceof TransportError) throw error
      const message = error instanceof Error ? error.message : String(error)
      throw new TransportError('write_failed', `${this.description}: ${message}`, { cause: error })
    }
  }
}
