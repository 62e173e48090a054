import net from 'node:net'
import type { RawLanguage } from '../../protocol/enums.ts'
import { type Piece, QuerySplitter } from './query-splitter.ts'
import { LANGUAGE_STATUS, type PrinterCondition } from './status-replies.ts'

export interface PrinterSimulatorOptions {
  language: RawLanguage
  /** 0 (the default): any free port. */
  port?: number
  /** Whether status queries get a reply (default true). Queries are stripped from `received()` either way. */
  answersStatus?: boolean
  name?: string
}

export interface PrinterSimulator {
  port: number
  host: '127.0.0.1'
  /** The printer URI the hub takes, e.g. `socket://127.0.0.1:9101?language=zpl`. */
  uri: string
  /** Every byte received that was NOT a status query, concatenated in arrival order. */
  received(): Buffer
  /** The status queries recognised so far, by name (`DLE EOT 1`, `~HQES`, ...), in order. */
  queries(): string[]
  /** How many TCP connections it accepted. */
  connections(): number
  setCondition(condition: Partial<PrinterCondition>): void
  setAnswersStatus(on: boolean): void
  /** Print data as it arrives; returns the unsubscribe function. */
  onData(listener: (bytes: Buffer) => void): () => void
  /** Resolves with `received()` once it holds at least `n` bytes; rejects after `timeoutMs` (default 10 s). */
  waitForBytes(n: number, timeoutMs?: number): Promise<Buffer>
  /** Forgets the bytes received so far (not the condition, nor the connection count). */
  clear(): void
  /** Closes the server and every socket. */
  close(): Promise<void>
}

const HOST = '127.0.0.1'

/**
 * A network printer on 127.0.0.1 (raw TCP, like port 9100): it records what it is sent and answers its
 * language's status queries (see status-replies.ts for the replies and query-splitter.ts for where a query
 * is recognised in the stream). Any number of connections at once, e.g. a print and a status connection.
 */
export async function startPrinterSimulator(options: PrinterSimulatorOptions): Promise<PrinterSimulator> {
  const status = LANGUAGE_STATUS[options.language]
  const condition: PrinterCondition = { paperOut: false, coverOpen: false, paperLow: false }
  let answersStatus = options.answersStatus ?? true
  let chunks: Buffer[] = []
  let length = 0
  const queryNames: string[] = []
  const listeners = new Set<(bytes: Buffer) => void>()
  const waiters = new Set<(error?: Error) => void>()
  const sockets = new Set<net.Socket>()
  let accepted = 0
  let closed = false

  const record = (bytes: Buffer) => {
    chunks.push(bytes)
    length += bytes.length
    for (const listener of [...listeners]) listener(bytes)
  }
  const received = () => {
    if (chunks.length > 1) chunks = [Buffer.concat(chunks)]
    return Buffer.from(chunks[0] ?? Buffer.alloc(0))
  }

  const handle = (socket: net.Socket, pieces: Piece[]) => {
    for (const piece of pieces) {
      if (piece.kind === 'print') {
        record(piece.bytes)
        continue
      }
      queryNames.push(piece.query.name)
      const reply = answersStatus ? piece.query.reply({ ...condition }) : null
      if (reply && socket.writable) socket.write(reply)
    }
  }

  const server = net.createServer({ noDelay: true }, (socket) => {
    accepted++
    sockets.add(socket)
    const splitter = new QuerySplitter(status)
    socket.on('data', (chunk: Buffer) => handle(socket, splitter.push(chunk)))
    // A client that resets the connection is not the simulator's problem.
    socket.on('error', () => {})
    socket.on('close', () => {
      sockets.delete(socket)
      handle(socket, splitter.end())
    })
  })

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen({ host: HOST, port: options.port ?? 0 }, () => {
      server.off('error', reject)
      resolve()
    })
  })
  const port = (server.address() as net.AddressInfo).port
  // encodeURIComponent (not URLSearchParams' `+` for space) so that any URI parser reads the name back.
  const name = options.name === undefined ? '' : `&name=${encodeURIComponent(options.name)}`

  return {
    port,
    host: HOST,
    uri: `socket://${HOST}:${port}?language=${options.language}${name}`,
    received,
    queries: () => [...queryNames],
    connections: () => accepted,
    setCondition(change) {
      Object.assign(condition, change)
    },
    setAnswersStatus(on) {
      answersStatus = on
    },
    onData(listener) {
      listeners.add(listener)
      return () => listeners.delete(listener)
    },
    waitForBytes(n, timeoutMs = 10_000) {
      if (length >= n) return Promise.resolve(received())
      return new Promise<Buffer>((resolve, reject) => {
        const done = (error?: Error) => {
          clearTimeout(timer)
          listeners.delete(check)
          waiters.delete(done)
          if (error) reject(error)
          else resolve(received())
        }
        const check = () => {
          if (length >= n) done()
        }
        const timer = setTimeout(
          () => done(new Error(`printer simulator: waited for ${n} bytes, received ${length}`)),
          timeoutMs,
        )
        listeners.add(check)
        waiters.add(done)
      })
    },
    clear() {
      chunks = []
      length = 0
    },
    async close() {
      if (closed) return
      closed = true
      for (const done of [...waiters]) done(new Error('printer simulator: closed while waiting for bytes'))
      for (const socket of sockets) socket.destroy()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
}
