import { execFileSync } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { MAX_CONNECT_PACKET_BYTES } from '../../../cloud/broker/connection-guard.ts'
import { connectOverLimitPattern, hubFrontConfText } from '../../../cloud/broker/hub-front-config.ts'
import { tempDir } from '../../helpers/temp-dir.ts'
import { makeCertificate } from '../fetch/tls-fixture.ts'

/** A CONNECT's fixed header announcing `length` bytes (MQTT 3.1.1 §2.2.3), then the variable header's start. */
function connectStart(length: number): Buffer {
  const bytes = [0x10]
  do {
    let byte = length % 128
    length = Math.floor(length / 128)
    if (length > 0) byte |= 0x80
    bytes.push(byte)
  } while (length > 0)
  return Buffer.from([...bytes, 0x00, 0x04])
}

const OPTIONS = {
  listen: { host: '127.0.0.1', port: 18830 },
  broker: { host: '127.0.0.1', port: 18831, tls: false },
  connectTimeoutMs: 5000,
  maxConnectBytes: MAX_CONNECT_PACKET_BYTES,
  maxPendingConnections: 512,
  maxConnections: 20000,
  keepaliveSeconds: 30,
}

describe('the hubs’ front (HAProxy) configuration', () => {
  it('refuses on its first three bytes exactly the CONNECTs that announce more than the limit', () => {
    // HAProxy matches with PCRE2; the pattern uses only what JavaScript's RegExp reads the same way.
    const pattern = new RegExp(connectOverLimitPattern(MAX_CONNECT_PACKET_BYTES))
    const lengths = [
      ...Array.from({ length: 20_000 }, (_, i) => i),
      2 ** 21 - 1,
      2 ** 21,
      15_000_000,
      2 ** 28 - 1,
    ]
    const wrong = lengths.filter((length) => {
      const start = connectStart(length)
      const bytes = start.length - 2 + length
      return (
        pattern.test(start.subarray(0, 3).toString('hex').toUpperCase()) !== bytes > MAX_CONNECT_PACKET_BYTES
      )
    })
    expect(wrong).toEqual([])
  })

  it('spells out only limits with a two-byte Remaining Length', () => {
    expect(() => connectOverLimitPattern(130)).toThrow()
    expect(() => connectOverLimitPattern(16_387)).toThrow()
    expect(connectOverLimitPattern(131)).toBeTruthy()
    expect(connectOverLimitPattern(16_386)).toBeTruthy()
  })

  it('is valid for HAProxy, in plain TCP and with TLS', () => {
    const dir = tempDir('hub-front-config-')
    try {
      const certificate = makeCertificate('localhost', ['localhost'])
      const pemFile = path.join(dir.path, 'hub-front.pem')
      writeFileSync(pemFile, `${certificate.cert}${certificate.key}`)
      for (const [name, text] of [
        ['plain.cfg', hubFrontConfText(OPTIONS)],
        ['tls.cfg', hubFrontConfText({ ...OPTIONS, pemFile, broker: { ...OPTIONS.broker, tls: true } })],
      ] as const) {
        const file = path.join(dir.path, name)
        writeFileSync(file, text)
        expect(execFileSync('haproxy', ['-c', '-f', file], { encoding: 'utf8' })).toMatch(/valid/)
      }
    } finally {
      dir.remove()
    }
  })
})
