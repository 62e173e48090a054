import net from 'node:net'

/** A plain TCP client for the simulator tests: write bytes, read back the first `n` reply bytes. */
export interface RawClient {
  write(bytes: Buffer): Promise<void>
  /** Resolves with the next `n` bytes the printer sent (queued replies are kept in order). */
  read(n: number): Promise<Buffer>
  /** Resolves once the printer closed the connection. */
  closed: Promise<void>
  close(): Promise<void>
}

export async function connectRaw(port: number, host = '127.0.0.1'): Promise<RawClient> {
  const socket = net.connect({ host, port, noDelay: true })
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve)
    socket.once('error', reject)
  })
  socket.on('error', () => {})
  let buffered = Buffer.alloc(0)
  let waiting: { n: number; resolve: (bytes: Buffer) => void } | null = null
  const deliver = () => {
    if (waiting && buffered.length >= waiting.n) {
      const { n, resolve } = waiting
      waiting = null
      const bytes = buffered.subarray(0, n)
      buffered = buffered.subarray(n)
      resolve(Buffer.from(bytes))
    }
  }
  socket.on('data', (chunk: Buffer) => {
    buffered = Buffer.concat([buffered, chunk])
    deliver()
  })
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()))
  return {
    write: (bytes) =>
      new Promise((resolve, reject) => socket.write(bytes, (e) => (e ? reject(e) : resolve()))),
    read(n) {
      return new Promise((resolve) => {
        waiting = { n, resolve }
        deliver()
      })
    },
    closed,
    async close() {
      socket.destroy()
      await closed
    },
  }
}
