import { closeSync, constants, openSync, readSync, writeSync } from 'node:fs'
import { SerialPort } from 'serialport'
import { afterEach, expect, it } from 'vitest'
import { delay } from '../../../hub/transports/operation-queue.ts'
import { SerialTransport } from '../../../hub/transports/serial.ts'
import { type PtyPair, startPtyPair } from './pty-pair.ts'

interface OpenedPort {
  port: {
    fd: number
    poller: { once(event: 'readable' | 'writable', listener: (error: Error | null) => void): void }
  }
}

let pair: PtyPair | null = null
let transport: SerialTransport | null = null
let printerEnd: number | null = null
afterEach(async () => {
  await transport?.close()
  if (printerEnd !== null) closeSync(printerEnd)
  await pair?.stop()
  pair = transport = printerEnd = null
})

/** Writes to a non-blocking fd until the kernel takes no more (EAGAIN); returns how much it took. */
function fill(fd: number): number {
  let taken = 0
  for (;;) {
    try {
      taken += writeSync(fd, Buffer.alloc(4096, 0x55))
    } catch {
      return taken
    }
  }
}

it('the serial transport wakes a write parked on a full line although a read re-arms while it waits (bindings-cpp 13 drops it)', async () => {
  pair = await startPtyPair()
  let port: SerialPort | null = null
  const line = {
    path: pair.a,
    baudRate: 19200,
    dataBits: 8,
    stopBits: 1,
    parity: 'none',
    flowControl: 'none',
  } as const
  transport = new SerialTransport(
    { kind: 'serial', ...line },
    { createPort: (o) => (port = new SerialPort(o)) },
  )
  await transport.open()
  const { fd, poller } = (port as unknown as OpenedPort).port
  printerEnd = openSync(pair.b, constants.O_RDWR | constants.O_NONBLOCK | constants.O_NOCTTY)

  // The printer reads nothing yet: fill the line through socat until the host's end refuses more.
  let parked = fill(fd)
  for (let i = 0; i < 20; i++) {
    await delay(20)
    parked += fill(fd)
  }
  expect(parked).toBeGreaterThan(0)
  let woken = false
  poller.once('writable', () => {
    woken = true
  })
  // What the binding's reader does on EAGAIN while the write is parked.
  poller.once('readable', () => {})

  // The printer now reads everything: the line drains, and the parked write must hear of it.
  const chunk = Buffer.alloc(65536)
  for (let i = 0; i < 100 && !woken; i++) {
    try {
      while (readSync(printerEnd, chunk) > 0);
    } catch {}
    await delay(20)
  }
  expect(woken).toBe(true)
})
