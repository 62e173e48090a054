import { describe, expect, it } from 'vitest'
import { PacketSizeMeter } from '../../../cloud/broker/packet-size-meter.ts'

/** An MQTT packet (MQTT 3.1.1 §2.2): type byte, Remaining Length (§2.2.3), then `length` body bytes. */
function packet(type: number, length: number): Buffer {
  const header = [type]
  let rest = length
  do {
    let byte = rest % 128
    rest = Math.floor(rest / 128)
    if (rest > 0) byte |= 0x80
    header.push(byte)
  } while (rest > 0)
  return Buffer.concat([Buffer.from(header), Buffer.alloc(length, 0x61)])
}

/** Feeds `bytes` in chunks of `size`; the first report, if any. */
function measureInChunks(meter: PacketSizeMeter, bytes: Buffer, size: number) {
  for (let at = 0; at < bytes.length; at += size) {
    const report = meter.measure(bytes.subarray(at, at + size))
    if (report) return report
  }
  return undefined
}

describe('PacketSizeMeter', () => {
  // PINGREQ (no body), a small PUBLISH, one with a two-byte and one with a three-byte Remaining Length.
  const stream = Buffer.concat([packet(0xc0, 0), packet(0x30, 10), packet(0x30, 200), packet(0x32, 20_000)])

  it.each([1, 2, 3, 7, 64, stream.length])(
    'lets packets at or under the limit through, in chunks of %i bytes',
    (size) => {
      expect(measureInChunks(new PacketSizeMeter(() => 20_004), stream, size)).toBeUndefined()
    },
  )

  it.each([1, 2, 3, 7, 64, stream.length])(
    'reports the first packet over the limit, whole header and body counted, in chunks of %i bytes',
    (size) => {
      expect(measureInChunks(new PacketSizeMeter(() => 20_003), stream, size)).toEqual({ bytes: 20_004 })
    },
  )

  it('reports a packet from its header alone, before any of its body arrives', () => {
    const meter = new PacketSizeMeter(() => 4096)
    expect(meter.measure(Buffer.from([0x10, 0xff, 0xff, 0xff]))).toBeUndefined()
    expect(meter.measure(Buffer.from([0x7f]))).toEqual({ bytes: 5 + (256 * 1024 * 1024 - 1) })
  })

  it('asks for the limit at each packet, so it can change as the connection goes on', () => {
    let limit = 100
    const meter = new PacketSizeMeter(() => limit)
    expect(meter.measure(packet(0x10, 50))).toBeUndefined()
    limit = 1000
    expect(meter.measure(packet(0x30, 500))).toBeUndefined()
    limit = 100
    expect(meter.measure(packet(0x30, 500))).toEqual({ bytes: 503 })
  })

  it('reports a Remaining Length longer than four bytes as malformed (MQTT 3.1.1 §2.2.3)', () => {
    const meter = new PacketSizeMeter(() => Number.MAX_SAFE_INTEGER)
    expect(meter.measure(Buffer.from([0x30, 0x80, 0x80, 0x80, 0x80, 0x01]))).toEqual({ malformed: true })
  })
})
