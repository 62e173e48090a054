import net from 'node:net'

/**
 * A TCP relay on 127.0.0.1 that a test can cut, to drop connections the way a flaky network does. Given
 * several target ports it is a load balancer: each new connection goes to the next target in turn, and to
 * the one after when a target refuses it (a node that is down), as a TCP balancer with passive health checks
 * does.
 */
export interface TcpProxy {
  port: number
  /** Destroys every relayed connection (both sides see a reset). */
  cutAll(): void
  /** While down, new connections are closed at once. */
  setDown(down: boolean): void
  /** How many connections each target took, in the order of the targets. */
  relayed(): number[]
  close(): Promise<void>
}

export async function startTcpProxy(target: number | number[], port = 0): Promise<TcpProxy> {
  const targets = Array.isArray(target) ? target : [target]
  const counts = targets.map(() => 0)
  const sockets = new Set<net.Socket>()
  let down = false
  let turn = 0
  const track = (socket: net.Socket) => {
    sockets.add(socket)
    socket.on('close', () => sockets.delete(socket))
  }
  /** Connects to the next target that accepts, trying each at most once; the client's bytes wait meanwhile. */
  const relay = (client: net.Socket, tries: number) => {
    if (tries === targets.length || client.destroyed) {
      client.destroy()
      return
    }
    const index = turn++ % targets.length
    const upstream = net.connect({ host: '127.0.0.1', port: targets[index]!, noDelay: true })
    track(upstream)
    upstream.once('error', () => relay(client, tries + 1))
    upstream.once('connect', () => {
      if (client.destroyed) {
        upstream.destroy()
        return
      }
      counts[index]!++
      upstream.removeAllListeners('error')
      for (const socket of [client, upstream])
        socket.on('error', () => {
          client.destroy()
          upstream.destroy()
        })
      client.on('close', () => upstream.destroy())
      upstream.on('close', () => client.destroy())
      client.pipe(upstream)
      upstream.pipe(client)
    })
  }
  const server = net.createServer({ noDelay: true }, (client) => {
    if (down) {
      client.destroy()
      return
    }
    track(client)
    client.on('error', () => client.destroy())
    relay(client, 0)
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
    relayed: () => [...counts],
    close: () =>
      new Promise((resolve) => {
        cutAll()
        server.close(() => resolve())
      }),
  }
}
