import { connect, type Socket } from 'node:net'
import type { TransportSpec } from '../printers/printer-spec.ts'
import { type PrinterStream, type PrinterStreamEvents, StreamTransport } from './stream-transport.ts'
import { TransportError } from './transport.ts'
import { transportUri } from './transport-uri.ts'

export interface SocketTransportOptions {
  /** How long `open` waits for the TCP handshake (default 5000 ms). */
  connectTimeoutMs?: number
  /** TCP keepalive probe delay, so a printer that vanished is noticed while idle (default 10000 ms). */
  keepAliveMs?: number
  /** How long `close` waits for the printer to close its side after our FIN before dropping it (2000 ms). */
  closeGraceMs?: number
}

/**
 * A raw TCP printer (the "raw"/"JetDirect" port 9100, CUPS `socket://`). Bytes go out as they are; status
 * replies come back on the same connection. TCP_NODELAY is set: status requests are tiny and Nagle's
 * algorithm with delayed ACKs would hold each one back.
 *
 * Many raw-9100 printers serve one connection at a time: a second client is refused or left waiting in
 * the backlog until the first closes. Hold the connection for a job or a status poll and close it when idle
 * so that other hosts can print too.
 */
export class SocketTransport extends StreamTransport {
  readonly #host: string
  readonly #port: number
  readonly #options: Required<SocketTransportOptions>

  constructor(spec: Extract<TransportSpec, { kind: 'socket' }>, options: SocketTransportOptions = {}) {
    super(transportUri(spec))
    this.#host = spec.host
    this.#port = spec.port
    this.#options = {
      connectTimeoutMs: options.connectTimeoutMs ?? 5000,
      keepAliveMs: options.keepAliveMs ?? 10_000,
      closeGraceMs: options.closeGraceMs ?? 2000,
    }
  }

  protected async openStream(events: PrinterStreamEvents): Promise<PrinterStream> {
    const socket = await this.#connect()
    socket.setKeepAlive(true, this.#options.keepAliveMs)
    socket.on('data', (chunk: Buffer) => events.data(chunk))
    socket.on('error', (error) => events.lost(error.message, error))
    // The printer closed its side (FIN) or the connection broke; either way it is gone for us.
    socket.on('end', () => events.lost('the printer closed the connection'))
    socket.on('close', () => events.lost('the connection closed'))
    return socketStream(socket, this.description, this.#options.closeGraceMs)
  }

  #connect(): Promise<Socket> {
    return new Promise((resolve, reject) => {
      const socket = connect({ host: this.#host, port: this.#port, noDelay: true })
      const fail = (message: string, cause?: unknown) => {
        clearTimeout(timer)
        socket.destroy()
        reject(new TransportError('unreachable', `${this.description}: ${message}`, { cause }))
      }
      const onError = (error: Error) => fail(error.message, error)
      const timer = setTimeout(
        () => fail(`no connection within ${this.#options.connectTimeoutMs} ms`),
        this.#options.connectTimeoutMs,
      )
      socket.once('error', onError)
      socket.once('connect', () => {
        clearTimeout(timer)
        socket.off('error', onError)
        resolve(socket)
      })
    })
  }
}

function socketStream(socket: Socket, description: string, closeGraceMs: number): PrinterStream {
  return {
    /** Resolves once Node has handed every byte to the kernel (the write callback), i.e. drained. */
    write: (bytes) =>
      new Promise<void>((resolve, reject) => {
        const onClose = () => reject(new TransportError('disconnected', `${description}: closed`))
        socket.once('close', onClose)
        socket.write(bytes, (error) => {
          socket.off('close', onClose)
          if (!error) resolve()
          else reject(error)
        })
      }),
    // Half-close first (FIN after every queued byte) rather than destroy: closing a socket with unread
    // input makes the kernel send RST, which may discard the tail of a job still in the send buffer.
    close: async () => {
      if (socket.destroyed) return
      await new Promise<void>((resolve) => {
        const timer = setTimeout(() => socket.destroy(), closeGraceMs)
        socket.once('close', () => {
          clearTimeout(timer)
          resolve()
        })
        socket.end()
        socket.resume()
      })
    },
    abandon: () => socket.destroy(),
  }
}
