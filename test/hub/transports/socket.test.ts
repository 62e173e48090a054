import { spawn } from 'node:child_process'
import { connect, createServer, type Server, type Socket } from 'node:net'
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

  it('describes itself by URI', () => {
    expect(new SocketTransport({ kind: 'socket', host: '127.0.0.1', port: 9100 }).description).toBe(
      'socket://127.0.0.1:9100',
    )
    expect(new SocketTransport({ kind: 'socket', host: '::1', port: 9101 }).description).toBe(
      'socket://[::1]:9101',
    )
  })

  it("rejects open with 'unreachable' when the handshake does not finish in time", async () => {
    // A listener that never accepts, with a backlog of 0: once one connection waits in its accept queue,
    // Linux drops further SYNs (tcp_conn_request: accept queue full), so the next connect hangs.
    const listener = spawn(
      'python3',
      [
        '-c',
        'import socket,sys\ns=socket.socket()\ns.bind(("127.0.0.1",0))\ns.listen(0)\nprint(s.getsockname()[1],flush=True)\nsys.stdin.read()',
      ],
      { stdio: ['pipe', 'pipe', 'inherit'] },
    )
    const exited = new Promise((resolve) => listener.once('exit', resolve))
    stops.push(async () => {
      listener.stdin.end()
      await exited
    })
    const port = Number(
      await new Promise<string>((resolve) =>
        listener.stdout.once('data', (d: Buffer) => resolve(d.toString())),
      ),
    )
    const fillers = [0, 1].map(() => connect({ host: '127.0.0.1', port }).on('error', () => {}))
    stops.push(async () => {
      for (const filler of fillers) filler.destroy()
    })
    await new Promise((resolve) => fillers[0]!.once('connect', resolve))
    const transport = new SocketTransport(
      { kind: 'socket', host: '127.0.0.1', port },
      { connectTimeoutMs: 100 },
    )
    const failure = await transport.open().catch((e: unknown) => e)
    expect(failure).toBeInstanceOf(TransportError)
    expect(failure).toMatchObject({
      kind: 'unreachable',
      message: expect.stringContaining('no connection within 100 ms'),
    })
    await transport.close()
  })

  it('keeps bytes that came during a timed-out query out of the next one', async () => {
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
