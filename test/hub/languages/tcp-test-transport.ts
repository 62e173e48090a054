import net from 'node:net'
import {
  type QueryOptions,
  replyAtTimeout,
  type Transport,
  TransportError,
} from '../../../hub/transports/transport.ts'

interface PendingQuery {
  chunks: Buffer[]
  isComplete: (reply: Buffer) => boolean
  finish: (reply: Buffer | null, error?: TransportError) => void
}

/**
 * A bare raw-TCP Transport for the status tests, standing in for hub/transports/socket.ts: connect, write,
 * and collect the reply to one query at a time until `isComplete` or the timeout. Bytes that arrive outside
 * a query are dropped, as the Transport contract says.
 */
export class TcpTestTransport implements Transport {
  readonly description: string
  #socket: net.Socket | null = null
  #pending: PendingQuery | null = null

  constructor(
    readonly host: string,
    readonly port: number,
  ) {
    this.description = `socket://${host}:${port}`
  }

  open(): Promise<void> {
    return new Promise((resolve, reject) => {
      const socket = net.connect({ host: this.host, port: this.port, noDelay: true })
      socket.once('connect', () => {
        socket.off('error', onConnectError)
        socket.on('error', () => {}) // reported through 'close' to whatever is in flight
        this.#socket = socket
        resolve()
      })
      const onConnectError = (error: Error) => {
        socket.destroy()
        reject(new TransportError('unreachable', `cannot connect to ${this.description}`, { cause: error }))
      }
      socket.once('error', onConnectError)
      socket.on('data', (chunk: Buffer) => this.#onData(chunk))
      socket.on('close', () => {
        if (this.#socket === socket) this.#socket = null
        this.#pending?.finish(
          null,
          new TransportError('disconnected', `${this.description} closed the connection`),
        )
      })
    })
  }

  write(bytes: Buffer): Promise<void> {
    const socket = this.#requireSocket()
    return new Promise((resolve, reject) => {
      socket.write(bytes, (error) => {
        if (error)
          reject(new TransportError('write_failed', `write to ${this.description} failed`, { cause: error }))
        else resolve()
      })
    })
  }

  async query(request: Buffer, options: QueryOptions): Promise<Buffer | null> {
    if (this.#pending) throw new Error('TcpTestTransport: one query at a time')
    let pending: PendingQuery | undefined
    const reply = new Promise<Buffer | null>((resolve, reject) => {
      const timer = setTimeout(
        () => pending?.finish(replyAtTimeout(pending.chunks, options)),
        options.timeoutMs,
      )
      pending = {
        chunks: [],
        isComplete: options.isComplete,
        finish: (value, error) => {
          clearTimeout(timer)
          if (this.#pending === pending) this.#pending = null
          if (error) reject(error)
          else resolve(value)
        },
      }
      this.#pending = pending
    })
    // Should the write below fail, the caller gets the write's error; this rejection must not go unhandled.
    reply.catch(() => {})
    try {
      await this.write(request)
    } catch (error) {
      pending?.finish(null)
      throw error
    }
    return reply
  }

  async close(): Promise<void> {
    const socket = this.#socket
    this.#socket = null
    if (!socket || socket.destroyed) return
    await new Promise<void>((resolve) => {
      socket.once('close', () => resolve())
      socket.destroy()
    })
  }

  #onData(chunk: Buffer): void {
    const pending = this.#pending
    if (!pending) return
    pending.chunks.push(chunk)
    const reply = Buffer.concat(pending.chunks)
    if (pending.isComplete(reply)) pending.finish(reply)
  }

  #requireSocket(): net.Socket {
    if (!this.#socket) throw new TransportError('disconnected', `${this.description} is not open`)
    return this.#socket
  }
}
