import { execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import type { IncomingMessage, ServerResponse } from 'node:http'
import { createServer, type Server } from 'node:https'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

export interface TestCertificate {
  key: string
  cert: string
}

/** A throwaway self-signed certificate made by the real openssl (RSA 2048, one day). */
export function makeCertificate(commonName: string, dnsNames: string[]): TestCertificate {
  const dir = mkdtempSync(join(tmpdir(), 'safe-fetch-'))
  try {
    const key = join(dir, 'key.pem')
    const cert = join(dir, 'cert.pem')
    const san = dnsNames.map((name) => `DNS:${name}`).join(',')
    execFileSync(
      'openssl',
      [
        ...['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', cert],
        ...['-subj', `/CN=${commonName}`, '-addext', `subjectAltName=${san}`, '-days', '1'],
      ],
      { stdio: 'ignore' },
    )
    return { key: readFileSync(key, 'utf8'), cert: readFileSync(cert, 'utf8') }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

export interface TestServer {
  server: Server
  port: number
  close: () => Promise<void>
}

/** A real HTTPS server on 127.0.0.1, random port. */
export async function startHttpsServer(
  certificate: TestCertificate,
  handler: (req: IncomingMessage, res: ServerResponse) => void,
): Promise<TestServer> {
  const server = createServer({ key: certificate.key, cert: certificate.cert }, handler)
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  const close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections()
      server.close(() => resolve())
    })
  return { server, port, close }
}

export interface StreamOutcome {
  sent: number
  finished: boolean
}

/**
 * Writes `total` bytes in chunks, honouring backpressure, and reports how far it got when the response
 * closed: `finished` is false when the client hung up first.
 */
export function streamBody(
  res: ServerResponse,
  total: number,
  chunkSize = 16 * 1024,
): Promise<StreamOutcome> {
  return new Promise((resolve) => {
    const chunk = Buffer.alloc(chunkSize, 0x41)
    let sent = 0
    res.once('close', () => resolve({ sent, finished: res.writableFinished }))
    const pump = () => {
      while (sent < total && !res.destroyed) {
        sent += chunk.length
        if (!res.write(chunk)) {
          res.once('drain', pump)
          return
        }
      }
      if (!res.destroyed) res.end()
    }
    pump()
  })
}
