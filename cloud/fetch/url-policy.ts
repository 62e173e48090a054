import { isIPv4, isIPv6 } from 'node:net'
import { ApiError } from '../../print-api/api-error.ts'
import { assertPublicAddress } from './ip-policy.ts'

/**
 * Host names that name this machine or a private network rather than a public site: `localhost` (RFC 6761
 * §6.3), `.local` (mDNS, RFC 6762), `.home.arpa` (RFC 8375), `.internal` (reserved for private use by ICANN,
 * 2024) and the common `localdomain` convention. Any other name is checked after resolution.
 */
const LOCAL_SUFFIXES = ['localhost', 'local', 'home.arpa', 'internal', 'localdomain'] as const

/**
 * Parses a caller-supplied document URL and applies the static part of the policy: an absolute `https://`
 * URL without credentials whose host is a public IP literal or a name that is not a local one. WHATWG URL
 * parsing (RFC 3986 as browsers read it) already turns every IPv4 spelling (`2130706433`, `0177.0.0.1`,
 * `0x7f.1`, `127.1`) into a dotted quad and canonicalises IPv6 literals, so the literal check sees one form.
 * Throws `invalid_url_request` for a malformed URL and `url_not_allowed` for a host that is not public.
 */
export function parseDocumentUrl(input: string): URL {
  // WHATWG parsing silently drops tabs, newlines and surrounding blanks; refuse them instead of guessing.
  // biome-ignore lint/suspicious/noControlCharactersInRegex: the point is to find control characters
  if (/[\u0000-\u0020\u007f]/.test(input)) invalid('malformed_url', 'The document URL contains whitespace.')
  let url: URL
  try {
    url = new URL(input)
  } catch {
    return invalid('malformed_url', 'The document URL is not a well-formed absolute URL.')
  }
  if (url.protocol !== 'https:') invalid('scheme_not_https', 'The document URL must use https.')
  // `https:host` and `https:\\host` parse, but are not the absolute form RFC 3986 §3 describes.
  if (!/^https:\/\/[^/\\]/i.test(input))
    invalid('malformed_url', 'The document URL must start with https://.')
  if (url.username !== '' || url.password !== '') {
    invalid('credentials_in_url', 'The document URL must not carry a user name or password.')
  }
  if (url.hostname === '') invalid('missing_host', 'The document URL has no host.')
  if (url.port === '0') invalid('invalid_port', 'The document URL names port 0.')
  const literal = hostAddressLiteral(url)
  if (literal !== null) assertPublicAddress(literal)
  else if (isLocalHostname(url.hostname)) {
    throw new ApiError('url_not_allowed', 'The document URL names a local host.', {
      reason: 'local_hostname',
    })
  }
  return url
}

/** The IP address a URL's host spells, without IPv6 brackets, or null when the host is a domain name. */
export function hostAddressLiteral(url: URL): string | null {
  const host = url.hostname
  if (host.startsWith('[') && host.endsWith(']') && isIPv6(host.slice(1, -1))) return host.slice(1, -1)
  return isIPv4(host) ? host : null
}

export function isLocalHostname(hostname: string): boolean {
  const name = hostname.toLowerCase().replace(/\.+$/, '')
  return LOCAL_SUFFIXES.some((suffix) => name === suffix || name.endsWith(`.${suffix}`))
}

function invalid(reason: string, message: string): never {
  throw new ApiError('invalid_url_request', message, { reason })
}
