import { isIP } from 'node:net'
import { checkServerIdentity, rootCertificates, type TLSSocket, connect as tlsConnect } from 'node:tls'
import { isApiError } from '../../print-api/api-error.ts'
import { abortable, deadline } from './abortable.ts'
import { resolveHostAddresses } from './dns-resolver.ts'
import { errorCode, fetchFailed, socketFailed, tlsFailed } from './failures.ts'
import { assertPublicAddress } from './ip-policy.ts'
import type { SafeFetchOptions } from './safe-fetch.ts'
import { hostAddressLiteral } from './url-policy.ts'

export interface ConnectTarget {
  address: string
  port: number
  servername: string
}

export type ConnectOptions = Pick<
  SafeFetchOptions,
  'connectTimeoutMs' | 'dnsTimeoutMs' | 'dnsTries' | 'dnsServers' | 'resolve' | 'connect' | 'tlsCa'
>

const DEFAULT_DNS_TIMEOUT_MS = 2000
const DEFAULT_DNS_TRIES = 2

/** The default connector: TLS to the checked address, SNI and identity check against the URL's host. */
export function connectTls(target: ConnectTarget, ca?: string | Buffer): TLSSocket {
  return tlsConnect({
    host: target.address,
    port: target.port,
    servername: isIP(target.servername) ? undefined : target.servername, // RFC 6066 §3: no IP in SNI
    checkServerIdentity: (_host, cert) => checkServerIdentity(target.servername, cert),
    ca: ca === undefined ? undefined : [...rootCertificates, ca],
    rejectUnauthorized: true,
    ALPNProtocols: ['http/1.1'],
  })
}

export async function openConnection(
  url: URL,
  options: ConnectOptions,
  total: AbortSignal,
): Promise<TLSSocket> {
  const limit = deadline(options.connectTimeoutMs, () =>
    fetchFailed('connect_timeout', 'Connecting timed out.'),
  )
  const signal = AbortSignal.any([total, limit.signal])
  try {
    const literal = hostAddressLiteral(url)
    const hostname = url.hostname.replace(/\.+$/, '')
    const addresses = literal === null ? await lookup(hostname, options, signal) : [literal]
    // Refuse when any address is not public: a name that also points inside is not a public document.
    for (const address of addresses) assertPublicAddress(address)
    const connect = options.connect ?? ((t: ConnectTarget) => connectTls(t, options.tlsCa))
    const port = url.port === '' ? 443 : Number(url.port)
    const servername = literal ?? hostname
    let failure: unknown
    for (const address of addresses) {
      try {
        return await handshake(openSocket(connect, { address, port, servername }), servername, signal)
      } catch (error) {
        // Only a refused or unreachable address moves on to the next one; TLS and timeouts end the fetch.
        if (!isApiError(error) || error.details?.reason !== 'connection_failed') throw error
        failure = error
      }
    }
    throw failure
  } finally {
    limit.clear()
  }
}

function openSocket(connect: (target: ConnectTarget) => TLSSocket, target: ConnectTarget): TLSSocket {
  try {
    return connect(target)
  } catch (error) {
    throw isApiError(error) ? error : socketFailed(error)
  }
}

async function lookup(hostname: string, options: ConnectOptions, signal: AbortSignal): Promise<string[]> {
  const dns = {
    timeoutMs: options.dnsTimeoutMs ?? DEFAULT_DNS_TIMEOUT_MS,
    tries: options.dnsTries ?? DEFAULT_DNS_TRIES,
    servers: options.dnsServers,
  }
  const resolve = options.resolve ?? ((name: string) => resolveHostAddresses(name, dns, signal))
  let addresses: string[]
  try {
    addresses = await abortable<string[]>(
      signal,
      (ok, fail) => resolve(hostname).then(ok, fail),
      () => {},
    )
  } catch (error) {
    if (isApiError(error)) throw error
    throw fetchFailed('dns_lookup_failed', 'The document host name could not be resolved.', errorCode(error))
  }
  if (addresses.length === 0) throw fetchFailed('dns_lookup_failed', 'The document host name has no address.')
  return addresses
}

function handshake(socket: TLSSocket, servername: string, signal: AbortSignal): Promise<TLSSocket> {
  return abortable<TLSSocket>(
    signal,
    (ok, fail) => {
      socket.once('secureConnect', () => {
        // Checked here as well, so that no connector can skip verification.
        const identity = socket.authorized
          ? checkServerIdentity(servername, socket.getPeerCertificate())
          : socket.authorizationError
        if (identity === undefined) return ok(socket)
        socket.destroy()
        fail(tlsFailed(identity))
      })
      socket.once('error', (error) => fail(socketFailed(error)))
      socket.once('close', () =>
        fail(fetchFailed('connection_failed', 'The connection closed during the handshake.')),
      )
    },
    () => socket.destroy(),
  )
}
