import { networkInterfaces } from 'node:os'

const WILDCARDS = new Set(['0.0.0.0', '::', '[::]'])

/**
 * Host names a person or a hub can use to reach a server listening on `host`: the host itself, or for a
 * wildcard listener `localhost` and this machine's own non-loopback addresses (a wildcard address is not
 * something a client can connect to).
 */
export function reachableAddresses(host: string): string[] {
  if (!WILDCARDS.has(host)) return [host.includes(':') ? `[${host}]` : host]
  const ipv6 = host !== '0.0.0.0'
  const addresses = Object.values(networkInterfaces())
    .flat()
    .filter((nic) => nic !== undefined && !nic.internal && (ipv6 || nic.family === 'IPv4'))
    .filter((nic) => nic!.family === 'IPv4' || !nic!.address.startsWith('fe80:'))
    .map((nic) => (nic!.family === 'IPv6' ? `[${nic!.address}]` : nic!.address))
  return ['localhost', ...new Set(addresses)]
}
