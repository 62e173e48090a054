import { afterEach, describe, expect, it } from 'vitest'
import { UsblpTransport } from '../../../hub/transports/usblp.ts'
import { bytesWaiting, type PtyPair, serialPeer, startPtyPair } from './pty-pair.ts'
import { transportContract } from './transport-contract.ts'

// No /dev/usb/lp* exists here. A pty slave stands in: a character device that is written and read with
// plain read(2)/write(2), answers EAGAIN when opened O_NONBLOCK and idle, and EIO once its other side is
// gone, which is how usblp behaves too (ENODEV after an unplug).
transportContract('usblp (pty stand-in for /dev/usb/lpN)', {
  async start() {
    const pair = await startPtyPair()
    const peer = await serialPeer(pair)
    return {
      transport: new UsblpTransport({ kind: 'usblp', path: pair.a }),
      peer,
      stop: async () => {
        await peer.close()
        await pair.stop()
      },
    }
  },
  unreachable: () => new UsblpTransport({ kind: 'usblp', path: '/dev/usb/lp-does-not-exist' }),
})

describe('usblp transport', () => {
  let pair: PtyPair | null = null
  afterEach(async () => {
    await pair?.stop()
    pair = null
  })

  it('drops bytes the device sent before a query', async () => {
    pair = await startPtyPair()
    const peer = await serialPeer(pair)
    const transport = new UsblpTransport({ kind: 'usblp', path: pair.a })
    try {
      await transport.open()
      await peer.send(Buffer.from('stale'))
      // The stale bytes are buffered on the host's side (socat relays them on its own time).
      await expect.poll(() => bytesWaiting(pair!.a)).toBe(5)
      const [reply] = await Promise.all([
        transport.query(Buffer.from('?'), { timeoutMs: 5000, isComplete: (r) => r.length >= 2 }),
        peer.waitForBytes(1).then(() => peer.send(Buffer.from('OK'))),
      ])
      expect(reply?.toString()).toBe('OK')
    } finally {
      await transport.close()
      await peer.close()
    }
  })

  it('closes promptly while a query is waiting', async () => {
    pair = await startPtyPair()
    const peer = await serialPeer(pair)
    const transport = new UsblpTransport({ kind: 'usblp', path: pair.a })
    await transport.open()
    const query = transport.query(Buffer.from('?'), { timeoutMs: 60_000, isComplete: () => false })
    await peer.waitForBytes(1)
    await transport.close()
    expect(await query).toBeNull()
    await peer.close()
  })
})
