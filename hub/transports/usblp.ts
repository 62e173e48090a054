import { constants, type FileHandle, open } from 'node:fs/promises'
import type { TransportSpec } from '../printers/printer-spec.ts'
import { delay, OperationQueue } from './operation-queue.ts'
import {
  type QueryOptions,
  replyAtTimeout,
  type Transport,
  TransportError,
  type TransportErrorKind,
} from './transport.ts'
import { transportUri } from './transport-uri.ts'

export interface UsblpTransportOptions {
  /** Pause between read attempts while a query waits for its reply (default 5 ms). */
  pollIntervalMs?: number
}

const READ_SIZE = 4096
/** errno codes meaning the device itself is gone: unplugged usblp (ENODEV), hung-up tty (EIO), ENXIO. */
const GONE = new Set(['ENODEV', 'EIO', 'ENXIO', 'EBADF'])
const AGAIN = new Set(['EAGAIN', 'EWOULDBLOCK', 'EINTR'])

function errnoOf(error: unknown): string {
  return (error as NodeJS.ErrnoException | undefined)?.code ?? ''
}

/**
 * A printer behind the Linux usblp driver (`/dev/usb/lpN`, drivers/usb/class/usblp.c): write(2) sends bulk
 * OUT, read(2) returns what the printer sent on bulk IN (bidirectional printers, interface protocol 2).
 *
 * The device is opened O_NONBLOCK and polled. A blocking read or write would sit in one of libuv's four
 * threadpool threads until the printer answers (never, for a printer without status, or while paper is
 * out), and such a thread can't be cancelled: close() would hang and the process could not exit. usblp
 * answers EAGAIN both when no reply is buffered and when its previous write URB is still in flight.
 *
 * Replies are only read during a query; whatever the device buffered before it is drained first and
 * dropped. A unidirectional printer's read fails (usblp answers EINVAL/EIO when it has no IN endpoint):
 * that query resolves null, "does not answer status".
 */
export class UsblpTransport implements Transport {
  readonly description: string
  readonly #path: string
  readonly #pollIntervalMs: number
  readonly #queue = new OperationQueue()
  #file: FileHandle | null = null
  #lost: TransportError | null = null
  #closing = false

  constructor(spec: Extract<TransportSpec, { kind: 'usblp' }>, options: UsblpTransportOptions = {}) {
    this.description = transportUri(spec)
    this.#path = spec.path
    this.#pollIntervalMs = options.pollIntervalMs ?? 5
  }

  async open(): Promise<void> {
    if (this.#file && !this.#lost) return
    await this.close()
    this.#lost = null
    this.#closing = false
    try {
      // O_NOCTTY: when the path is a tty (a stand-in in tests) it must not become our controlling terminal.
      this.#file = await open(this.#path, constants.O_RDWR | constants.O_NONBLOCK | constants.O_NOCTTY)
    } catch (error) {
      // usblp allows one opener at a time and answers EBUSY to the next.
      const kind: TransportErrorKind = errnoOf(error) === 'EBUSY' ? 'busy' : 'unreachable'
      throw new TransportError(kind, `${this.description}: ${(error as Error).message}`, { cause: error })
    }
  }

  write(bytes: Buffer): Promise<void> {
    return this.#queue.run(() => this.#write(bytes))
  }

  query(request: Buffer, options: QueryOptions): Promise<Buffer | null> {
    return this.#queue.run(async () => {
      const file = this.#usable()
      const buffer = Buffer.alloc(READ_SIZE)
      // Drop what arrived outside a query (stale replies, unsolicited status).
      while ((await this.#read(file, buffer)) > 0) {}
      await this.#write(request)
      const deadline = performance.now() + options.timeoutMs
      const chunks: Buffer[] = []
      while (!this.#closing) {
        const n = await this.#read(file, buffer)
        if (n < 0) return null
        if (n > 0) {
          chunks.push(Buffer.from(buffer.subarray(0, n)))
          const reply = Buffer.concat(chunks)
          if (options.isComplete(reply)) return reply
          continue
        }
        const left = deadline - performance.now()
        if (left <= 0) return replyAtTimeout(chunks, options)
        await delay(Math.min(this.#pollIntervalMs, left))
      }
      return null
    })
  }

  async close(): Promise<void> {
    const file = this.#file
    if (!file) return
    this.#closing = true
    await this.#queue.idle()
    this.#file = null
    await file.close().catch(() => {})
  }

  #usable(): FileHandle {
    if (this.#lost) throw this.#lost
    if (!this.#file || this.#closing)
      throw new TransportError('disconnected', `${this.description}: not open`)
    return this.#file
  }

  #fail(error: unknown, otherwise: TransportErrorKind): TransportError {
    const message = `${this.description}: ${(error as Error).message}`
    if (!GONE.has(errnoOf(error))) return new TransportError(otherwise, message, { cause: error })
    this.#lost ??= new TransportError('disconnected', message, { cause: error })
    return this.#lost
  }

  /** Bytes read (0: nothing buffered now), or -1 when the device has no IN side (no status). */
  async #read(file: FileHandle, buffer: Buffer): Promise<number> {
    try {
      return (await file.read(buffer, 0, buffer.length, null)).bytesRead
    } catch (error) {
      const code = errnoOf(error)
      if (AGAIN.has(code)) return 0
      if (code === 'EINVAL' || code === 'EOPNOTSUPP') return -1
      throw this.#fail(error, 'disconnected')
    }
  }

  /** Loops over partial writes and EAGAIN (device still busy with the previous URB) until all is taken. */
  async #write(bytes: Buffer): Promise<void> {
    const file = this.#usable()
    let offset = 0
    let backoff = 1
    while (offset < bytes.length) {
      if (this.#closing)
        throw new TransportError('write_failed', `${this.description}: closed during a write`)
      try {
        const { bytesWritten } = await file.write(bytes, offset, bytes.length - offset, null)
        offset += bytesWritten
        backoff = 1
      } catch (error) {
        if (!AGAIN.has(errnoOf(error))) throw this.#fail(error, 'write_failed')
        await delay(backoff)
        backoff = Math.min(backoff * 2, 20)
      }
    }
  }
}
