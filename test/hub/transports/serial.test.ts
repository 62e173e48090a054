import { SerialPortMock } from 'serialport'
import { afterEach, describe, expect, it } from 'vitest'
import type { TransportSpec } from '../../../hub/printers/printer-spec.ts'
import { SerialTransport, serialOpenOptions } from '../../../hub/transports/serial.ts'
import { TransportError } from '../../../hub/transports/transport.ts'
import { type PtyPair, serialPeer, startPtyPair } from './pty-pair.ts'
import { transportContract } from './transport-contract.ts'

type SerialSpec = Extract<TransportSpec, { kind: 'serial' }>
const line = (path: string, extra: Partial<SerialSpec> = {}): SerialSpec => ({
  kind: 'serial',
  path,
  baudRate: 19200,
  dataBits: 8,
  stopBits: 1,
  parity: 'none',
  flowControl: 'none',
  ...extra,
})

// A real serial line between two pseudo-terminals (socat); node-serialport's OS binding on both ends.
transportContract('serial (socat pty pair)', {
  async start() {
    const pair = await startPtyPair()
    const peer = await serialPeer(pair)
    return {
      transport: new SerialTransport(line(pair.a)),
      peer,
      stop: async () => {
        await peer.close()
        await pair.stop()
      },
    }
  },
  unreachable: () => new SerialTransport(line('/dev/does-not-exist/ttyUSB9')),
})

describe('serial transport', () => {
  let pair: PtyPair | null = null
  afterEach(async () => {
    await pair?.stop()
    pair = null
    SerialPortMock.binding.reset()
  })

  it('passes line settings and flow control to node-serialport', () => {
    expect(
      serialOpenOptions(line('/dev/ttyS1', { baudRate: 9600, parity: 'even', dataBits: 7, stopBits: 2 })),
    ).toEqual({
      path: '/dev/ttyS1',
      baudRate: 9600,
      dataBits: 7,
      stopBits: 2,
      parity: 'even',
      rtscts: false,
      xon: false,
      xoff: false,
      autoOpen: false,
      lock: true,
    })
    expect(serialOpenOptions(line('/dev/ttyS1', { flowControl: 'rtscts' }))).toMatchObject({
      rtscts: true,
      xon: false,
    })
    expect(serialOpenOptions(line('/dev/ttyS1', { flowControl: 'xonxoff' }))).toMatchObject({
      rtscts: false,
      xon: true,
      xoff: true,
    })
  })

  it('opens a port through an injected binding (node-serialport mock) with those settings', async () => {
    SerialPortMock.binding.createPort('/dev/ttyMOCK0')
    let created: SerialPortMock | null = null
    const transport = new SerialTransport(line('/dev/ttyMOCK0', { baudRate: 38400, flowControl: 'rtscts' }), {
      createPort: (options) => {
        created = new SerialPortMock(options)
        return created
      },
    })
    await transport.open()
    await transport.write(Buffer.from('hello'))
    const port = (created as SerialPortMock | null)?.port
    expect(port?.openOptions).toMatchObject({ baudRate: 38400, rtscts: true })
    expect(port?.lastWrite).toEqual(Buffer.from('hello'))
    await transport.close()
  })

  it("rejects open with 'busy' while another transport holds the line", async () => {
    pair = await startPtyPair()
    const first = new SerialTransport(line(pair.a))
    await first.open()
    const second = new SerialTransport(line(pair.a))
    try {
      // node-serialport's `lock` takes flock(2) LOCK_EX|LOCK_NB on the device.
      const failure = await second.open().catch((e: unknown) => e)
      expect(failure).toBeInstanceOf(TransportError)
      expect((failure as TransportError).kind).toBe('busy')
    } finally {
      await second.close()
      await first.close()
    }
  })
})
