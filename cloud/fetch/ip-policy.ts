import { isIPv4, isIPv6 } from 'node:net'
import { ApiError } from '../../print-api/api-error.ts'

/**
 * Which IP addresses the document fetcher may connect to. Deny by default: an address is public only when no
 * rule below refuses it, and for IPv6 only inside 2000::/3, the one block IANA allocates as global unicast.
 * Ranges come from the IANA IPv4 and IPv6 Special-Purpose Address Registries (RFC 6890 and successors).
 */

export type NonPublicReason =
  | 'invalid_address'
  | 'unspecified_address'
  | 'loopback_address'
  | 'private_address'
  | 'link_local_address'
  | 'cgnat_address'
  | 'unique_local_address'
  | 'multicast_address'
  | 'broadcast_address'
  | 'ipv4_mapped_address'
  | 'ipv4_compatible_address'
  | 'teredo_address'
  | 'reserved_address'

export type AddressVerdict = { public: true } | { public: false; reason: NonPublicReason }

interface Rule {
  readonly prefix: bigint
  readonly bits: number
  readonly reason: NonPublicReason
}

/** Rules in order; the first match wins (broadcast before 240/4). */
const IPV4_RULES: readonly Rule[] = [
  v4('0.0.0.0', 8, 'unspecified_address'), // "this network", RFC 1122 §3.2.1.3
  v4('10.0.0.0', 8, 'private_address'), // RFC 1918
  v4('100.64.0.0', 10, 'cgnat_address'), // shared address space, RFC 6598
  v4('127.0.0.0', 8, 'loopback_address'), // RFC 1122 §3.2.1.3
  v4('169.254.0.0', 16, 'link_local_address'), // RFC 3927; holds the cloud metadata address 169.254.169.254
  v4('172.16.0.0', 12, 'private_address'), // RFC 1918
  v4('192.0.0.0', 24, 'reserved_address'), // IETF protocol assignments, RFC 6890 §2.1
  v4('192.0.2.0', 24, 'reserved_address'), // TEST-NET-1, RFC 5737
  v4('192.88.99.0', 24, 'reserved_address'), // 6to4 relay anycast, deprecated by RFC 7526
  v4('192.168.0.0', 16, 'private_address'), // RFC 1918
  v4('198.18.0.0', 15, 'reserved_address'), // benchmarking, RFC 2544
  v4('198.51.100.0', 24, 'reserved_address'), // TEST-NET-2, RFC 5737
  v4('203.0.113.0', 24, 'reserved_address'), // TEST-NET-3, RFC 5737
  v4('224.0.0.0', 4, 'multicast_address'), // RFC 5771
  v4('255.255.255.255', 32, 'broadcast_address'), // limited broadcast, RFC 919 §7, RFC 8190
  v4('240.0.0.0', 4, 'reserved_address'), // future use, RFC 1112 §4
]

/** IPv6 rules checked before the embedded-IPv4 forms and the 2000::/3 allocation test. */
const IPV6_RULES: readonly Rule[] = [
  v6('::', 128, 'unspecified_address'), // RFC 4291 §2.5.2
  v6('::1', 128, 'loopback_address'), // RFC 4291 §2.5.3
  v6('::ffff:0:0', 96, 'ipv4_mapped_address'), // RFC 4291 §2.5.5.2, refused whatever v4 it carries
  v6('::', 96, 'ipv4_compatible_address'), // deprecated, RFC 4291 §2.5.5.1
  v6('64:ff9b:1::', 48, 'reserved_address'), // local-use NAT64, RFC 8215
  v6('fc00::', 7, 'unique_local_address'), // RFC 4193
  v6('fe80::', 10, 'link_local_address'), // RFC 4291 §2.5.6
  v6('fec0::', 10, 'reserved_address'), // site-local, deprecated by RFC 3879
  v6('ff00::', 8, 'multicast_address'), // RFC 4291 §2.7
  v6('2001::', 32, 'teredo_address'), // Teredo, RFC 4380: tunnels to a host we cannot see
  v6('2001::', 23, 'reserved_address'), // IETF protocol assignments, RFC 2928 (benchmarking, ORCHID, ...)
  v6('2001:db8::', 32, 'reserved_address'), // documentation, RFC 3849
  v6('3fff::', 20, 'reserved_address'), // documentation, RFC 9637
]

const NAT64 = v6('64:ff9b::', 96, 'reserved_address') // well-known prefix, RFC 6052 §2.1: v4 in the low 32 bits
const SIX_TO_FOUR = v6('2002::', 16, 'reserved_address') // RFC 3056 §2: v4 in bits 16..47
const GLOBAL_UNICAST = v6('2000::', 3, 'reserved_address') // IANA IPv6 Address Space registry

/** Classifies an IPv4 or IPv6 address string (a zone suffix such as `%eth0` is ignored). */
export function classifyAddress(address: string): AddressVerdict {
  const text = address.split('%')[0] ?? ''
  if (isIPv4(text)) return classifyIpv4(parseIpv4(text))
  if (isIPv6(text)) return classifyIpv6(parseIpv6(text))
  return { public: false, reason: 'invalid_address' }
}

export function isPublicAddress(address: string): boolean {
  return classifyAddress(address).public
}

/** Throws `url_not_allowed` unless the address is public; `details.reason` names the range. */
export function assertPublicAddress(address: string): void {
  const verdict = classifyAddress(address)
  if (!verdict.public) {
    throw new ApiError('url_not_allowed', 'The document URL leads to an address that is not public.', {
      reason: verdict.reason,
    })
  }
}

function classifyIpv4(value: bigint): AddressVerdict {
  const rule = IPV4_RULES.find((r) => matches(value, r, 32))
  return rule ? { public: false, reason: rule.reason } : { public: true }
}

function classifyIpv6(value: bigint): AddressVerdict {
  const rule = IPV6_RULES.find((r) => matches(value, r, 128))
  if (rule) return { public: false, reason: rule.reason }
  // Translated and tunnelled forms are only as public as the IPv4 address inside them.
  if (matches(value, NAT64, 128)) return classifyIpv4(value & 0xffffffffn)
  if (matches(value, SIX_TO_FOUR, 128)) return classifyIpv4((value >> 80n) & 0xffffffffn)
  if (!matches(value, GLOBAL_UNICAST, 128)) return { public: false, reason: 'reserved_address' }
  return { public: true }
}

function matches(value: bigint, rule: Rule, width: number): boolean {
  const shift = BigInt(width - rule.bits)
  return value >> shift === rule.prefix >> shift
}

/** Dotted quad, already validated by `isIPv4`. */
function parseIpv4(text: string): bigint {
  return text.split('.').reduce((acc, octet) => (acc << 8n) | BigInt(Number(octet)), 0n)
}

/** Any RFC 4291 §2.2 text form, already validated by `isIPv6`, including a dotted IPv4 tail. */
function parseIpv6(text: string): bigint {
  let hex = text
  const tail = /(\d+\.\d+\.\d+\.\d+)$/.exec(text)?.[1]
  if (tail !== undefined) {
    const v4 = Number(parseIpv4(tail))
    hex = `${text.slice(0, -tail.length)}${(v4 >>> 16).toString(16)}:${(v4 & 0xffff).toString(16)}`
  }
  const [head = '', rest] = hex.split('::')
  const left = head === '' ? [] : head.split(':')
  const right = rest === undefined || rest === '' ? [] : rest.split(':')
  const zeros: string[] = Array(8 - left.length - right.length).fill('0')
  return [...left, ...zeros, ...right].reduce((acc, group) => (acc << 16n) | BigInt(`0x${group}`), 0n)
}

function v4(address: string, bits: number, reason: NonPublicReason): Rule {
  return { prefix: parseIpv4(address), bits, reason }
}

function v6(address: string, bits: number, reason: NonPublicReason): Rule {
  return { prefix: parseIpv6(address), bits, reason }
}
