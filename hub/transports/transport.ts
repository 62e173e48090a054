/**
 * A connection to one printer (hardware sits behind small interfaces). Every transport — raw TCP,
 * serial, the Linux usblp device, libusb bulk endpoints — implements this, has a test double, and passes the
 * same contract suite.
 */
export interface Transport {
  /** Where it goes, for logs (`socket://10.0.0.5:9100`); never holds secrets. */
  readonly description: string
  /** Opens the device or connection; rejects with a TransportError when it cannot be reached. */
  open(): Promise<void>
  /** Writes all bytes; resolves once they have been handed to the device (drained), rejects on failure. */
  write(bytes: Buffer): Promise<void>
  /**
   * Sends a status request and collects the printer's reply until `isComplete(reply)` holds or `timeoutMs`
   * passes. Resolves null when nothing complete came back in time: the printer does not answer status
   * (with `partial`, what did come back, if anything). Bytes that arrive outside a query are dropped.
   */
  query(request: Buffer, options: QueryOptions): Promise<Buffer | null>
  /** Closes it; safe to call twice or when open failed. */
  close(): Promise<void>
}

export interface QueryOptions {
  timeoutMs: number
  isComplete: (reply: Buffer) => boolean
  /** When the time is up, resolve with the bytes that came (null if none) rather than null. */
  partial?: boolean
}

/** What a query resolves with once its time is up: null, or with `partial` the bytes that came, if any. */
export function replyAtTimeout(chunks: readonly Buffer[], options: QueryOptions): Buffer | null {
  return options.partial && chunks.length > 0 ? Buffer.concat(chunks) : null
}

export type TransportErrorKind = 'unreachable' | 'disconnected' | 'write_failed' | 'busy'

export class TransportError extends Error {
  constructor(
    readonly kind: TransportErrorKind,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options)
    this.name = 'TransportError'
  }
}
