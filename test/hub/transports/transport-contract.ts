import { randomBytes } from 'node:crypto'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { delay } from '../../../hub/transports/operation-queue.ts'
import { type Transport, TransportError } from '../../../hub/transports/transport.ts'

/** The printer's side of a transport under test. */
export interface TransportPeer {
  /** Resolves with everything received once at least `count` bytes have arrived. */
  waitForBytes(count: number): Promise<Buffer>
  /** Sends bytes from the printer to the host. */
  send(bytes: Buffer): Promise<void>
  /** The printer goes away: connection closed, line hung up, device unplugged. Resolves once it is gone. */
  goAway(): Promise<void>
}

export interface TransportHarness {
  transport: Transport
  peer: TransportPeer
  /** Stops everything the harness started. */
  stop(): Promise<void>
  /** Handles the harness can see still open after `stop` (e.g. a fake binding's device handles). */
  openHandles?(): number
}

export interface ContractSubject {
  start(): Promise<TransportHarness>
  /** A transport whose target does not exist (nothing listening, no such device). */
  unreachable(): Transport
}

const STATUS_REQUEST = Buffer.from([0x10, 0x04, 0x01]) // ESC/POS DLE EOT 1: transmit printer status

/** Counts of the process's active libuv handles and requests, by kind (sockets, servers, timers...). */
function resources(): Map<string, number> {
  const counts = new Map<string, number>()
  for (const kind of process.getActiveResourcesInfo()) counts.set(kind, (counts.get(kind) ?? 0) + 1)
  return counts
}

function grown(before: Map<string, number>): string[] {
  return [...resources()]
    .filter(([kind, n]) => n > (before.get(kind) ?? 0))
    .map(([kind, n]) => `${kind}×${n}`)
}

/**
 * The behaviour every Transport promises (hub/transports/transport.ts), run against each implementation
 * with a real or simulated printer on the other end.
 */
export function transportContract(name: string, subject: ContractSubject): void {
  describe(`${name}: Transport contract`, () => {
    let harness: TransportHarness
    let before: Map<string, number>

    beforeEach(async () => {
      before = resources()
      harness = await subject.start()
    })

    afterEach(async () => {
      await harness.transport.close()
      await harness.stop()
      expect(harness.openHandles?.() ?? 0).toBe(0)
      // Nothing left open: every socket, server, child process and timer it started has gone.
      for (let i = 0; i < 100 && grown(before).length > 0; i++) await delay(10)
      expect(grown(before)).toEqual([])
    })

    it('writes exact bytes in order, every byte value included', async () => {
      const { transport, peer } = harness
      const all = Buffer.from(Array.from({ length: 256 }, (_, i) => i))
      await transport.open()
      await transport.write(all)
      await transport.write(Buffer.from('\r\n\x1b@second'))
      expect(await peer.waitForBytes(all.length + 10)).toEqual(
        Buffer.concat([all, Buffer.from('\r\n\x1b@second')]),
      )
    })

    it('writes a 1 MB payload intact', async () => {
      const { transport, peer } = harness
      const payload = randomBytes(1024 * 1024)
      await transport.open()
      await transport.write(payload)
      expect((await peer.waitForBytes(payload.length)).equals(payload)).toBe(true)
    })

    it('keeps the order of writes that are not awaited one by one', async () => {
      const { transport, peer } = harness
      await transport.open()
      const parts = Array.from({ length: 20 }, (_, i) => Buffer.alloc(5000, i))
      await Promise.all(parts.map((p) => transport.write(p)))
      expect((await peer.waitForBytes(100_000)).equals(Buffer.concat(parts))).toBe(true)
    })

    it('query returns the reply to its request', async () => {
      const { transport, peer } = harness
      await transport.open()
      const [reply] = await Promise.all([
        transport.query(STATUS_REQUEST, { timeoutMs: 5000, isComplete: (r) => r.length >= 1 }),
        peer.waitForBytes(STATUS_REQUEST.length).then(() => peer.send(Buffer.from([0x16]))),
      ])
      expect(reply).toEqual(Buffer.from([0x16]))
    })

    it('query assembles a reply that arrives in pieces', async () => {
      const { transport, peer } = harness
      await transport.open()
      const answer = Buffer.from('PRINTER STATUS: 00 READY\r\n')
      const sendInPieces = async () => {
        await peer.waitForBytes(3)
        for (const piece of [answer.subarray(0, 4), answer.subarray(4, 11), answer.subarray(11)]) {
          await peer.send(piece)
          await delay(30)
        }
      }
      const [reply] = await Promise.all([
        transport.query(Buffer.from('~HS'), { timeoutMs: 5000, isComplete: (r) => r.includes('\r\n') }),
        sendInPieces(),
      ])
      expect(reply).toEqual(answer)
    })

    it('query resolves null when no reply comes in time, and the transport still works', async () => {
      const { transport, peer } = harness
      await transport.open()
      expect(await transport.query(STATUS_REQUEST, { timeoutMs: 100, isComplete: () => true })).toBeNull()
      await transport.write(Buffer.from('after'))
      expect(await peer.waitForBytes(STATUS_REQUEST.length + 5)).toEqual(
        Buffer.concat([STATUS_REQUEST, Buffer.from('after')]),
      )
    })

    it('query with `partial` resolves with what came when the rest does not come in time, and null when nothing did', async () => {
      const { transport, peer } = harness
      await transport.open()
      const four = Buffer.concat([STATUS_REQUEST, STATUS_REQUEST, STATUS_REQUEST, STATUS_REQUEST])
      const options = { timeoutMs: 300, isComplete: (r: Buffer) => r.length >= 4, partial: true }
      // Two of the four replies come back; the printer leaves the others unanswered.
      const [reply] = await Promise.all([
        transport.query(four, options),
        peer.waitForBytes(four.length).then(() => peer.send(Buffer.from([0x16, 0x12]))),
      ])
      expect(reply).toEqual(Buffer.from([0x16, 0x12]))
      expect(await transport.query(STATUS_REQUEST, options)).toBeNull()
    })

    it('rejects writes and queries with a TransportError once the printer has gone', async () => {
      const { transport, peer } = harness
      await transport.open()
      await transport.write(Buffer.from('hello'))
      await peer.waitForBytes(5)
      await peer.goAway()
      // The loss may surface on the first write or a few later (TCP learns of it from the reply to a write).
      let failure: unknown = null
      for (let i = 0; i < 100 && failure === null; i++) {
        failure = await transport.write(Buffer.alloc(1024, 0x20)).then(
          () => null,
          (error: unknown) => error,
        )
        if (failure === null) await delay(20)
      }
      expect(failure).toBeInstanceOf(TransportError)
      expect(['disconnected', 'write_failed']).toContain((failure as TransportError).kind)
      await expect(
        transport.query(STATUS_REQUEST, { timeoutMs: 200, isComplete: () => true }),
      ).rejects.toBeInstanceOf(TransportError)
    })

    it("rejects open with 'unreachable' when the target does not exist", async () => {
      const transport = subject.unreachable()
      const failure = await transport.open().catch((error: unknown) => error)
      expect(failure).toBeInstanceOf(TransportError)
      expect((failure as TransportError).kind).toBe('unreachable')
      expect((failure as TransportError).message).toContain(transport.description)
      await transport.close()
    })

    it('closes twice, before opening, and reopens after a close', async () => {
      const { transport, peer } = harness
      await transport.close()
      await transport.open()
      await transport.write(Buffer.from('one'))
      await peer.waitForBytes(3)
      await transport.close()
      await transport.close()
      await expect(transport.write(Buffer.from('x'))).rejects.toBeInstanceOf(TransportError)
      await transport.open()
      await transport.write(Buffer.from('two'))
      expect(await peer.waitForBytes(6)).toEqual(Buffer.from('onetwo'))
    })
  })
}
