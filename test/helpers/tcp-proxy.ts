import net from 'node:net'

/** A TCP relay on 127.0.0.1 that a test can cut, to drop connections the way a flaky network does. */
export interface TcpProxy {
  port: number
  /** Destroys every relayed connection (both sides see a reset). */
  cutAll(): void
  /** While down, new connections are closed at once. */
  setDown(down: boolean): void
  close(): Promise<void>
}

export async function startTcpProxy(targetPort: number, port = 0): Promise<TcpProxy> {
  const sockets = new Set<net.Socket>()
  let down = false
  const server = net.createServer({ noDelay: true }, (client) => {
    if (down) {
      client.destroy()
      return
    }
    const upstream = net.connect({ host: '127.0.0.1', port: targetPort, noDelay: true })
    for (const socket of [client, upstream]) {
      sockets.add(socket)
      socket.on('close', () => sockets.delete(socket))
      socket.on('error', () => {
        client.destroy()
        upstream.destroy()
      })
    }
    client.pipe(upstream)
    upstream.pipe(client)
  })
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve))
  const address = server.address() as net.AddressInfo
  const cutAll = () => {
    for (const socket of sockets) socket.destroy()
  }
  return {
    port: address.port,
    cutAll,
    setDown(value) {
      down = value
    },
    close: () =>
      new Promise((resolve) => {
        cutAll()
        server.close(() => resolve())
      }),
  }
}
