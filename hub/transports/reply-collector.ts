import { type QueryOptions, replyAtTimeout, type TransportError } from './transport.ts'

interface PendingReply {
  chunks: Buffer[]
  isComplete: (reply: Buffer) => boolean
  timer: NodeJS.Timeout
  settle: (reply: Buffer | null, error?: TransportError) => void
}

/**
 * The reply half of `Transport.query` for transports that receive bytes as events (TCP, serial): collects
 * what arrives while a query is open until `isComplete` holds or the time is up. Bytes that arrive while no
 * query is open are dropped, as the Transport contract says (a printer's unsolicited status, e.g. ESC/POS
 * automatic status back, must not be mistaken for the answer to a later request).
 */
export class ReplyCollector {
  #pending: PendingReply | null = null

  /** Feeds received bytes. */
  push(chunk: Buffer): void {
    const pending = this.#pending
    if (!pending) return
    pending.chunks.push(chunk)
    const reply = Buffer.concat(pending.chunks)
    if (pending.isComplete(reply)) pending.settle(reply)
  }

  /**
   * Opens a collection; call it before sending the request so that a fast reply is not dropped. Resolves
   * with the complete reply, or when it did not come in `timeoutMs` with null (or, `partial`, what came).
   */
  collect(options: QueryOptions): Promise<Buffer | null> {
    if (this.#pending) this.#pending.settle(null)
    return new Promise<Buffer | null>((resolve, reject) => {
      const pending: PendingReply = {
        chunks: [],
        isComplete: options.isComplete,
        timer: setTimeout(() => pending.settle(replyAtTimeout(pending.chunks, options)), options.timeoutMs),
        settle: (reply, error) => {
          clearTimeout(pending.timer)
          if (this.#pending === pending) this.#pending = null
          if (error) reject(error)
          else resolve(reply)
        },
      }
      this.#pending = pending
    })
  }

  /**
   * One status query on a stream transport: open the collection, send the request, and wait for the reply.
   * If the request cannot be sent, the collection is closed and the send error is thrown.
   */
  async request(send: () => Promise<void>, options: QueryOptions): Promise<Buffer | null> {
    const reply = this.collect(options)
    try {
      await send()
    } catch (error) {
      this.cancel()
      await reply
      throw error
    }
    return reply
  }

  /** Ends the open collection with null (the request could not be sent; nothing to wait for). */
  cancel(): void {
    this.#pending?.settle(null)
  }

  /** Ends the open collection with an error (the connection was lost while waiting). */
  fail(error: TransportError): void {
    this.#pending?.settle(null, error)
  }
}
