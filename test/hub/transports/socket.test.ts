import { createServer, type Server, type Socket } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { SocketTransport } from '../../../hub/transports/socket.ts'
import { TransportError } from '../../../hub/transports/transport.ts'
import { ByteSink } from './byte-sink.ts'
import { type TransportHarness, transportContract } from './transport-contract.ts'

/** A raw 9100 printer on 127.0.0.1: records what each connection sends; `send` answers on the latest one. */
async function startRawPrinter(): Promise<{
  server: Server
  port: number
  sink: ByteSink
  latest: () => Promise<Socket>
  stop(): Promise<void>
}> {
  const sink = new ByteSink()
  const sockets = new Set<Socket>()
  let connected: (socket: Socket) => void = () => {}
  let latest = new Promise<Socket>((resolve) => {
    connected = resolve
  })
  const server = createServer({ noDelay: true }, (socket) => {
    sockets.add(socket)
    socket.on('data', (chunk) => sink.push(chunk))
    socket.on('error', () => {})
    socket.on('close', () => sockets.delete(socket))
    connected(socket)
    latest = Promise.resolve(socket)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const port = (server.address() as { port: number }).port
  const stop = async () => {
    for (const socket of sockets) socket.destroy()
    if (server.listening) await new Promise((resolve) => server.close(resolve))
  }
  return { server, port, sink, latest: () => latest, stop }
}

/** A port on 127.0.0.1 where nothing listens: bound, then released. */
async function closedPort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as { port: number }
  await new Promise((resolve) => server.close(resolve))
  return port
}

const refusedPort = await closedPort()

transportContract('socket', {
  async start(): Promise<TransportHarness> {
    const printer = await startRawPrinter()
    const transport = new SocketTransport({ kind: 'socket', host: '127.0.0.1', port: printer.port })
    return {
      transport,
      peer: {
        waitForBytes: (count) => printer.sink.waitFor(count),
        send: async (bytes) => {
          const socket = await printer.latest()
          await new Promise<void>((resolve, reject) =>
            socket.write(bytes, (e) => (e ? reject(e) : resolve())),
          )
        },
        goAway: printer.stop,
      },
      stop: printer.stop,
    }
  },
  unreachable: () => new SocketTransport({ kind: 'socket', host: '127.0.0.1', port: refusedPort }),
})

describe('socket transport', () => {
  const stops: (() => Promise<void>)[] = []
  afterEach(async () => {
    for (const stop of stops.splice(0)) await stop()
  })

  it('sets TCP_NODELAY and describes itself by URI', async () => {
    const printer = await startRawPrinter()
    const transport = new SocketTransport({ kind: 'socket', host: '127.0.0.1', port: printer.port })
    stops.push(() => transport.close(), printer.stop)
    expect(transport.description).toBe(`socket://127.0.0.1:${printer.port}`)
    await transport.open()
    const [socket] = await Promise.all([printer.latest(), transport.write(Buffer.from('x'))])
    expect(socket.remoteAddress).toBe('127.0.0.1')
  })

  it("rejects open with 'unreachable' when the handshake does not finish in time", async () => {
    // A listener with a full backlog never completes new handshakes: fill it, then connect once more.
    const printer = await startRawPrinter()
    stops.push(printer.stop)
    printer.server.close()
    const transport = new SocketTransport(
      { kind: 'socket', host: '127.0.0.1', port: printer.port },
      { connectTimeoutMs: 50 },
    )
    const failure = await transport.open().catch((e: unknown) => e)
    expect(failure).toBeInstanceOf(TransportError)
    expect((failure as TransportError).kind).toBe('unreachable')
  })

  it('drops bytes that arrive outside a query', async () => {
    const printer = await startRawPrinter()
    const transport = new SocketTransport({ kind: 'socket', host: '127.0.0.1', port: printer.port })
    stops.push(() => transport.close(), printer.stop)
    await transport.open()
    const socket = await printer.latest()
    socket.write('unsolicited')
    // A first query lets the unsolicited bytes arrive; it finds no complete reply and times out.
    expect(
      await transport.query(Buffer.from('?'), { timeoutMs: 100, isComplete: (r) => r.includes('OK') }),
    ).toBeNull()
    const [reply] = await Promise.all([
      transport.query(Buffer.from('?'), { timeoutMs: 5000, isComplete: (r) => r.includes('OK') }),
      printer.sink.waitFor(2).then(() => socket.write('OK')),
    ])
    expect(reply?.toString()).toBe('OK')
  })
})
