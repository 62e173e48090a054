import { Resolver } from 'node:dns/promises'

export interface DnsOptions {
  /** c-ares `timeout`: each name server's first try; later tries wait longer (c-ares backs off). */
  timeoutMs: number
  /** c-ares `tries` per name server. */
  tries: number
  /** Name servers (`address` or `address:port`); the system's (/etc/resolv.conf) when absent. */
  servers?: string[]
}

/** Error codes that say the name exists in no form, rather than that the lookup failed. */
const NO_ADDRESS = new Set(['ENODATA', 'ENOTFOUND'])

/**
 * The IPv4 (A) and IPv6 (AAAA) addresses of a host name, asked of DNS by c-ares on the event loop. Unlike
 * `dns.lookup` (getaddrinfo on libuv's four shared threads, which file operations also use), a slow or
 * silent DNS server cannot stall anything else, and every query has its own timeout. /etc/hosts is not read:
 * documents are fetched from public names only. `signal` cancels the queries.
 */
export async function resolveHostAddresses(
  hostname: string,
  options: DnsOptions,
  signal?: AbortSignal,
): Promise<string[]> {
  const resolver = new Resolver({ timeout: options.timeoutMs, tries: options.tries })
  if (options.servers !== undefined) resolver.setServers(options.servers)
  const cancel = () => resolver.cancel()
  signal?.addEventListener('abort', cancel, { once: true })
  try {
    const [v4, v6] = await Promise.allSettled([resolver.resolve4(hostname), resolver.resolve6(hostname)])
    const addresses = [v4, v6].flatMap((result) => (result.status === 'fulfilled' ? result.value : []))
    if (addresses.length > 0) return addresses
    const errors = [v4, v6].flatMap((result) => (result.status === 'rejected' ? [result.reason] : []))
    // Report why the lookup failed (a timeout, a refusal) before "no such name".
    throw errors.find((error) => !NO_ADDRESS.has(error?.code)) ?? errors[0] ?? new Error('no address')
  } finally {
    signal?.removeEventListener('abort', cancel)
  }
}
