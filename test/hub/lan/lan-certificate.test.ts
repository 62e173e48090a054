// @peculiar/x509 (read directly below) needs the Reflect metadata polyfill loaded before it, as in the module.
import 'reflect-metadata'
import { createHash, createPrivateKey, generateKeyPairSync, randomUUID, X509Certificate } from 'node:crypto'
import { readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import https from 'node:https'
import type { AddressInfo } from 'node:net'
import path from 'node:path'
import tls from 'node:tls'
import * as x509 from '@peculiar/x509'
import { Agent, buildConnector } from 'undici'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import {
  LAN_TLS_CERT_FILE,
  LAN_TLS_KEY_FILE,
  type LanCertificate,
  type LanCertificateOptions,
  lanTlsOptions,
  loadOrCreateLanCertificate,
} from '../../../hub/lan/lan-certificate.ts'
import { tempDir } from '../../helpers/temp-dir.ts'

// The hub's self-signed certificate for its LAN API (hub/lan/lan-certificate.ts): real files, real TLS on
// 127.0.0.1, and a till's client that pins the certificate's fingerprint.

const HUB = randomUUID()
const NOW = new Date('2026-11-28T21:00:00Z')
const DAY = 86_400_000
const HOSTNAMES = [`hub-${HUB.slice(0, 8)}.local`, 'bakery-front.local']
const ADDRESSES = ['192.168.1.20', 'fe80::1']

let dir: ReturnType<typeof tempDir>
beforeEach(() => {
  dir = tempDir('print-hub-lan-cert-')
})
afterEach(() => dir.remove())

function options(overrides: Partial<LanCertificateOptions> = {}): LanCertificateOptions {
  return { dir: dir.path, hubId: HUB, hostnames: HOSTNAMES, addresses: ADDRESSES, now: NOW, ...overrides }
}

const file = (name: string) => path.join(dir.path, name)
const fingerprintHex = (cert: X509Certificate) => cert.fingerprint256.replaceAll(':', '').toLowerCase()

describe('loadOrCreateLanCertificate', () => {
  it('makes an ECDSA P-256 server certificate naming the hub, its names and its addresses', async () => {
    const made = await loadOrCreateLanCertificate(options())
    const cert = new X509Certificate(made.cert)

    expect(cert.subject).toBe(`CN=print-hub ${HUB}`)
    expect(cert.issuer).toBe(cert.subject)
    expect(cert.subjectAltName).toBe(
      `DNS:${HOSTNAMES[0]}, DNS:bakery-front.local, IP Address:192.168.1.20, IP Address:FE80:0:0:0:0:0:0:1`,
    )
    expect(Date.parse(cert.validFrom)).toBe(NOW.getTime() - 3_600_000)
    expect(Date.parse(cert.validTo)).toBe(NOW.getTime() + 825 * DAY)
    expect(made.notAfter).toEqual(new Date(NOW.getTime() + 825 * DAY))
    expect(cert.serialNumber).toMatch(/^[0-7][0-9A-F]{31}$/)
    expect(cert.ca).toBe(false)
    expect(cert.keyUsage).toEqual(['1.3.6.1.5.5.7.3.1']) // extendedKeyUsage serverAuth
    expect(cert.publicKey.asymmetricKeyType).toBe('ec')
    expect(cert.publicKey.asymmetricKeyDetails?.namedCurve).toBe('prime256v1')
    expect(cert.verify(cert.publicKey)).toBe(true)
    expect(cert.checkPrivateKey(createPrivateKey(made.key))).toBe(true)
    expect(made.key).toMatch(/^-----BEGIN PRIVATE KEY-----\n/)

    const spki = cert.publicKey.export({ type: 'spki', format: 'der' })
    expect(made.sha256).toBe(fingerprintHex(cert))
    expect(made.sha256).toBe(createHash('sha256').update(cert.raw).digest('hex'))
    expect(made.spkiSha256).toBe(createHash('sha256').update(spki).digest('base64'))

    // Criticality and the key identifier, read with the library that wrote them.
    const parsed = new x509.X509Certificate(made.cert)
    expect(parsed.getExtension(x509.BasicConstraintsExtension)).toMatchObject({ ca: false, critical: true })
    expect(parsed.getExtension(x509.KeyUsagesExtension)).toMatchObject({
      usages: x509.KeyUsageFlags.digitalSignature,
      critical: true,
    })
    expect(parsed.getExtension(x509.ExtendedKeyUsageExtension)?.critical).toBe(false)
    expect(parsed.getExtension(x509.SubjectAlternativeNameExtension)?.critical).toBe(false)
    // RFC 5280 §4.2.1.2 (1): SHA-1 of the subjectPublicKey BIT STRING, the 65-octet uncompressed P-256 point.
    expect(parsed.getExtension(x509.SubjectKeyIdentifierExtension)?.keyId).toBe(
      createHash('sha1').update(spki.subarray(-65)).digest('hex'),
    )

    expect(statSync(file(LAN_TLS_KEY_FILE)).mode & 0o777).toBe(0o600)
    expect(readFileSync(file(LAN_TLS_KEY_FILE), 'utf8')).toBe(made.key)
    expect(readFileSync(file(LAN_TLS_CERT_FILE), 'utf8')).toBe(made.cert)
    expect(readdirSync(dir.path).sort()).toEqual([LAN_TLS_CERT_FILE, LAN_TLS_KEY_FILE]) // no temporary files
  })

  it('keeps the certificate across restarts while it covers the names and has over 30 days left', async () => {
    const made = await loadOrCreateLanCertificate(options())
    const later = await loadOrCreateLanCertificate(
      options({
        now: new Date(NOW.getTime() + 794 * DAY), // 31 days left
        hostnames: [HOSTNAMES[0]!.toUpperCase()], // fewer names, and in capitals
        addresses: ['FE80:0:0::1'],
      }),
    )
    expect(later).toEqual(made)
    expect(readFileSync(file(LAN_TLS_CERT_FILE), 'utf8')).toBe(made.cert)
  })

  it('makes a new certificate with the same key when a name or an address is added', async () => {
    const made = await loadOrCreateLanCertificate(options())
    const withName = await loadOrCreateLanCertificate(
      options({ hostnames: [...HOSTNAMES, 'till-side.local'] }),
    )
    const withAddress = await loadOrCreateLanCertificate(
      options({ hostnames: [...HOSTNAMES, 'till-side.local'], addresses: [...ADDRESSES, '::ffff:10.0.0.9'] }),
    )

    expect(new X509Certificate(withName.cert).subjectAltName).toContain('DNS:till-side.local')
    expect(new X509Certificate(withAddress.cert).subjectAltName).toContain('IP Address:0:0:0:0:0:FFFF:A00:9')
    expect(new Set([made.sha256, withName.sha256, withAddress.sha256]).size).toBe(3)
    for (const renewed of [withName, withAddress]) {
      expect(renewed.key).toBe(made.key)
      expect(renewed.spkiSha256).toBe(made.spkiSha256)
    }
    expect(readFileSync(file(LAN_TLS_CERT_FILE), 'utf8')).toBe(withAddress.cert)
  })

  it('makes a new certificate with the same key when 30 days or fewer are left', async () => {
    const made = await loadOrCreateLanCertificate(options())
    const now = new Date(NOW.getTime() + 795 * DAY) // exactly 30 days left
    const renewed = await loadOrCreateLanCertificate(options({ now }))

    expect(renewed.sha256).not.toBe(made.sha256)
    expect(renewed.key).toBe(made.key)
    expect(renewed.spkiSha256).toBe(made.spkiSha256)
    expect(renewed.notAfter).toEqual(new Date(now.getTime() + 825 * DAY))
    expect(Date.parse(new X509Certificate(renewed.cert).validFrom)).toBe(now.getTime() - 3_600_000)
  })

  it('makes the certificate again when its file is missing, corrupt or for another hub', async () => {
    const made = await loadOrCreateLanCertificate(options())

    rmSync(file(LAN_TLS_CERT_FILE))
    const afterMissing = await loadOrCreateLanCertificate(options())
    writeFileSync(file(LAN_TLS_CERT_FILE), made.cert.slice(0, 400)) // cut short
    const afterCorrupt = await loadOrCreateLanCertificate(options())
    const otherHub = randomUUID()
    const afterOtherHub = await loadOrCreateLanCertificate(options({ hubId: otherHub }))

    const fingerprints = [made, afterMissing, afterCorrupt, afterOtherHub].map((c) => c.sha256)
    expect(new Set(fingerprints).size).toBe(4)
    for (const remade of [afterMissing, afterCorrupt, afterOtherHub]) {
      expect(remade.key).toBe(made.key)
      expect(new X509Certificate(remade.cert).checkPrivateKey(createPrivateKey(made.key))).toBe(true)
    }
    expect(new X509Certificate(afterOtherHub.cert).subject).toBe(`CN=print-hub ${otherHub}`)
  })

  it('makes a new key, and so a new certificate, when the key file is corrupt or not a P-256 key', async () => {
    const made = await loadOrCreateLanCertificate(options())

    writeFileSync(
      file(LAN_TLS_KEY_FILE),
      '-----BEGIN PRIVATE KEY-----\nbm90IGEga2V5\n-----END PRIVATE KEY-----\n',
    )
    const afterCorrupt = await loadOrCreateLanCertificate(options())
    const ed25519 = generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' })
    writeFileSync(file(LAN_TLS_KEY_FILE), ed25519, { mode: 0o644 })
    const afterEd25519 = await loadOrCreateLanCertificate(options())

    for (const [before, after] of [
      [made, afterCorrupt],
      [afterCorrupt, afterEd25519],
    ] as const) {
      expect(after.key).not.toBe(before.key)
      expect(after.sha256).not.toBe(before.sha256)
      expect(after.spkiSha256).not.toBe(before.spkiSha256)
      expect(new X509Certificate(after.cert).checkPrivateKey(createPrivateKey(after.key))).toBe(true)
    }
    expect(statSync(file(LAN_TLS_KEY_FILE)).mode & 0o777).toBe(0o600)
    expect(readFileSync(file(LAN_TLS_KEY_FILE), 'utf8')).toBe(afterEd25519.key)
  })

  it('refuses what a certificate cannot name, and a validity past 825 days', async () => {
    await expect(loadOrCreateLanCertificate(options({ addresses: ['fe80::1%eth0'] }))).rejects.toThrow(
      /not an IP address/,
    )
    await expect(loadOrCreateLanCertificate(options({ hostnames: ['bad name.local'] }))).rejects.toThrow(
      /not a DNS name/,
    )
    await expect(loadOrCreateLanCertificate(options({ hostnames: [], addresses: [] }))).rejects.toThrow(
      /needs a host name or an address/,
    )
    await expect(loadOrCreateLanCertificate(options({ validDays: 826 }))).rejects.toThrow(RangeError)
    await expect(loadOrCreateLanCertificate(options({ validDays: 30 }))).rejects.toThrow(RangeError)
    expect(readdirSync(dir.path)).toEqual([])
  })
})

/**
 * How a till connects: the hub's certificate is self-signed, so Node never calls `checkServerIdentity` for it
 * (the chain check fails first). The till turns the chain check off and compares the certificate's SHA-256,
 * which the cloud published, once the handshake is done and before it sends a byte.
 */
function connectPinned(port: number, pinnedSha256: string): Promise<tls.TLSSocket> {
  return new Promise((resolve, reject) => {
    const socket = tls.connect({ host: '127.0.0.1', port, rejectUnauthorized: false, minVersion: 'TLSv1.2' })
    socket.once('error', reject)
    socket.once('secureConnect', () => {
      const presented = socket.getPeerCertificate().fingerprint256.replaceAll(':', '').toLowerCase()
      if (presented === pinnedSha256) return resolve(socket)
      socket.destroy()
      reject(new Error(`the hub presented certificate ${presented}, not the pinned ${pinnedSha256}`))
    })
  })
}

function get(socket: tls.TLSSocket): Promise<string> {
  return new Promise((resolve, reject) => {
    let answer = ''
    socket.setEncoding('utf8')
    socket.on('data', (chunk) => {
      answer += chunk
    })
    socket.once('end', () => resolve(answer))
    socket.once('error', reject)
    socket.end('GET /api/v1/printers HTTP/1.1\r\nHost: hub.local\r\nConnection: close\r\n\r\n')
  })
}

/** The same pin with fetch: undici's connector makes the TLS connection, and the pin is checked before use. */
function pinnedDispatcher(pinnedSha256: string): Agent {
  const connect = buildConnector({ rejectUnauthorized: false })
  return new Agent({
    connect: (opts, callback) =>
      connect(opts, (error, socket) => {
        if (error) return callback(error, null)
        const presented = (socket as tls.TLSSocket).getPeerCertificate().fingerprint256
        if (presented.replaceAll(':', '').toLowerCase() === pinnedSha256) return callback(null, socket)
        socket.destroy()
        callback(new Error('the hub presented another certificate than the pinned one'), null)
      }),
  })
}

describe('a till pinning the hub certificate', () => {
  let certificate: LanCertificate
  let otherCertificate: LanCertificate
  let server: https.Server
  let port: number
  const requests: string[] = []

  beforeEach(async () => {
    certificate = await loadOrCreateLanCertificate(options())
    const other = tempDir('print-hub-lan-cert-other-')
    try {
      otherCertificate = await loadOrCreateLanCertificate({ ...options(), dir: other.path })
    } finally {
      other.remove()
    }
    requests.length = 0
    server = https.createServer(lanTlsOptions(certificate), (request, response) => {
      requests.push(`${request.method} ${request.url}`)
      response.setHeader('content-type', 'application/json')
      response.end('{"printers":[]}')
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    port = (server.address() as AddressInfo).port
  })

  afterEach(async () => {
    server.closeAllConnections()
    await new Promise<void>((resolve, reject) => server.close((error) => (error ? reject(error) : resolve())))
    // Closed handles leave the event loop a turn or two after their close callbacks.
    await vi.waitFor(() =>
      expect(process.getActiveResourcesInfo().filter((r) => r.startsWith('TCP'))).toEqual([]),
    )
  })

  it('gives Node the key, the certificate and TLS 1.2 at least', () => {
    expect(lanTlsOptions(certificate)).toEqual({
      key: certificate.key,
      cert: certificate.cert,
      minVersion: 'TLSv1.2',
    })
  })

  it('talks to the hub whose certificate it pinned, and to no other', async () => {
    const socket = await connectPinned(port, certificate.sha256)
    expect(socket.authorized).toBe(false) // no CA vouches for it: the pin does
    expect(socket.getProtocol()).toBe('TLSv1.3')
    const answer = await get(socket)
    expect(answer).toMatch(/^HTTP\/1\.1 200 OK\r\n/)
    expect(answer).toContain('{"printers":[]}')

    await expect(connectPinned(port, otherCertificate.sha256)).rejects.toThrow(/not the pinned/)
    expect(requests).toEqual(['GET /api/v1/printers'])
  })

  it('does the same with fetch and an undici dispatcher', async () => {
    const pinned = pinnedDispatcher(certificate.sha256)
    const wrong = pinnedDispatcher(otherCertificate.sha256)
    try {
      const response = await fetch(`https://127.0.0.1:${port}/api/v1/printers`, {
        dispatcher: pinned,
      } as RequestInit)
      expect(response.status).toBe(200)
      expect(await response.json()).toEqual({ printers: [] })

      const refused = await fetch(`https://127.0.0.1:${port}/api/v1/printers`, {
        dispatcher: wrong,
      }).catch((error: Error) => error)
      expect(refused).toBeInstanceOf(TypeError) // fetch failed
      expect((refused as Error).cause).toMatchObject({ message: /another certificate than the pinned one/ })
      expect(requests).toEqual(['GET /api/v1/printers'])
    } finally {
      await Promise.all([pinned.close(), wrong.close()])
    }
  })
})
