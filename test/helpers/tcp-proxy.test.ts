import net from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { startTcpProxy, type TcpProxy } from './tcp-proxy.ts'

/** A server that answers each connection's first chunk with its name and that chunk, then closes. */
async function namedEcho(name: string) {
  const server = net.createServer((socket) =>
    socket.once('data', (chunk) => socket.end(Buffer.concat([Buffer.from(`${name}:`), chunk]))),
  )
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    port: (server.address() as net.AddressInfo).port,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  }
}

/** Sends `text` through the proxy and reads the whole answer. */
function ask(port: number, text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    const socket = net.connect({ host: '127.0.0.1', port }, () => socket.write(text))
    socket.on('data', (chunk) => chunks.push(chunk))
    socket.on('end', () => resolve(Buffer.concat(chunks).toString()))
    socket.on('error', reject)
  })
}

describe('the TCP relay as a load balancer', () => {
  let proxy: TcpProxy | undefined
  const servers: { close(): Promise<void> }[] = []
  afterEach(async () => {
    await proxy?.close()
    for (const server of servers.splice(0)) await server.close()
  })

  it('takes the targets in turn, and passes over one that refuses connections', async () => {
    const a = await namedEcho('a')
    const b = await namedEcho('b')
    servers.push(a, b)
    proxy = await startTcpProxy([a.port, b.port])
    const answers: string[] = []
    for (const n of [1, 2, 3, 4]) answers.push(await ask(proxy.port, `hello ${n}`))
    expect(answers).toEqual(['a:hello 1', 'b:hello 2', 'a:hello 3', 'b:hello 4'])
    await a.close()
    servers.splice(0, 1)
    for (const n of [5, 6, 7]) answers.push(await ask(proxy.port, `hello ${n}`))
    expect(answers.slice(4)).toEqual(['b:hello 5', 'b:hello 6', 'b:hello 7'])
    expect(proxy.relayed()).toEqual([2, 5])
  })
})
