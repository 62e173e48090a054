import { isIPv4, isIPv6 } from 'node:net'

/** The eight 16-bit groups of an IPv6 address (RFC 4291 §2.2, with `::` and a dotted IPv4 tail expanded). */
function ipv6Groups(address: string): number[] {
  const withoutZone = address.split('%')[0] ?? ''
  const [head = '', tail] = withoutZone.split('::') as [string, string | undefined]
  const parse = (part: string): number[] =>
    part === ''
      ? []
      : part.split(':').flatMap((group) => {
          if (!isIPv4(group)) return [Number.parseInt(group, 16)]
          const [a = 0, b = 0, c = 0, d = 0] = group.split('.').map(Number)
          return [(a << 8) | b, (c << 8) | d]
        })
  const left = parse(head)
  if (tail === undefined) return left
  const right = parse(tail)
  return [...left, ...new Array<number>(8 - left.length - right.length).fill(0), ...right]
}

/**
 * The address a per-address quota counts. An IPv6 client usually holds a whole /64 (RFC 7421 §1; a host
 * picks its own interface identifier and may change it at will, RFC 8981), so IPv6 addresses are grouped by
 * their /64 prefix. IPv4 addresses, and IPv4 addresses mapped into IPv6 (`::ffff:a.b.c.d`, RFC 4291
 * §2.5.5.2), count one by one, as the IPv4 address.
 */
export function quotaAddress(ip: string): string {
  if (!isIPv6(ip)) return ip
  const groups = ipv6Groups(ip)
  if (groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff) {
    const [high = 0, low = 0] = groups.slice(6)
    return `${high >> 8}.${high & 0xff}.${low >> 8}.${low & 0xff}`
  }
  return `${groups
    .slice(0, 4)
    .map((g) => g.toString(16))
    .join(':')}::/64`
}
