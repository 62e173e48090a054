import { describe, expect, it } from 'vitest'
import { hostAddressLiteral, isLocalHostname, parseDocumentUrl } from '../../../cloud/fetch/url-policy.ts'
import { ApiError } from '../../../print-api/api-error.ts'

function refusal(input: string): ApiError {
  try {
    parseDocumentUrl(input)
  } catch (error) {
    if (error instanceof ApiError) return error
    throw error
  }
  throw new Error(`${input} was accepted`)
}

describe('parseDocumentUrl', () => {
  it('accepts a public https URL and returns it parsed', () => {
    const url = parseDocumentUrl('https://Docs.Example.com:8443/a/b.pdf?x=1#page=2')
    expect(url.hostname).toBe('docs.example.com')
    expect(url.port).toBe('8443')
    expect(url.pathname).toBe('/a/b.pdf')
    expect(hostAddressLiteral(url)).toBeNull()
  })

  it('accepts public IP literals', () => {
    expect(hostAddressLiteral(parseDocumentUrl('https://8.8.8.8/x.pdf'))).toBe('8.8.8.8')
    expect(hostAddressLiteral(parseDocumentUrl('https://134744072/x.pdf'))).toBe('8.8.8.8')
    expect(hostAddressLiteral(parseDocumentUrl('https://[2606:4700:4700::1111]/x.pdf'))).toBe(
      '2606:4700:4700::1111',
    )
  })

  it.each([
    ['https://127.0.0.1/', 'loopback_address'],
    ['https://2130706433/', 'loopback_address'], // decimal
    ['https://017700000001/', 'loopback_address'], // octal, one number
    ['https://0177.0.0.1/', 'loopback_address'], // octal
    ['https://0x7f.1/', 'loopback_address'], // hex, short
    ['https://0x7f000001/', 'loopback_address'], // hex, one number
    ['https://0x7F.0x0.0x0.0x1/', 'loopback_address'],
    ['https://127.1/', 'loopback_address'], // short
    ['https://127.0.0.1./', 'loopback_address'], // trailing dot
    ['https://%31%32%37.0.0.1/', 'loopback_address'], // percent-encoded
    ['https://１２７.０.０.１/', 'loopback_address'], // full-width digits (IDNA mapping)
    ['https://10.1/', 'private_address'],
    ['https://167772161/', 'private_address'],
    ['https://192.168.1.1:8443/', 'private_address'],
    ['https://169.254.169.254/latest/meta-data/', 'link_local_address'],
    ['https://0xa9.0xfe.0xa9.0xfe/', 'link_local_address'],
    ['https://0/', 'unspecified_address'],
    ['https://[::1]/', 'loopback_address'],
    ['https://[0:0:0:0:0:0:0:1]/', 'loopback_address'],
    ['https://[::]/', 'unspecified_address'],
    ['https://[::ffff:127.0.0.1]/', 'ipv4_mapped_address'],
    ['https://[::ffff:7f00:1]/', 'ipv4_mapped_address'],
    ['https://[::ffff:169.254.169.254]/', 'ipv4_mapped_address'],
    ['https://[::127.0.0.1]/', 'ipv4_compatible_address'],
    ['https://[fe80::1]/', 'link_local_address'],
    ['https://[fd00::1]/', 'unique_local_address'],
    ['https://[64:ff9b::7f00:1]/', 'loopback_address'],
    ['https://[2002:a00:1::]/', 'private_address'],
    ['https://localhost/', 'local_hostname'],
    ['https://LOCALHOST./', 'local_hostname'],
    ['https://api.localhost/', 'local_hostname'],
    ['https://printer.local/', 'local_hostname'],
    ['https://metadata.google.internal/', 'local_hostname'],
    ['https://nas.home.arpa/', 'local_hostname'],
    ['https://localhost.localdomain/', 'local_hostname'],
  ])('refuses %s as not allowed (%s)', (input, reason) => {
    const error = refusal(input)
    expect(error.code).toBe('url_not_allowed')
    expect(error.status).toBe(400)
    expect(error.details).toEqual({ reason })
  })

  it.each([
    ['http://example.com/doc.pdf', 'scheme_not_https'],
    ['HTTP://example.com/doc.pdf', 'scheme_not_https'],
    ['ftp://example.com/doc.pdf', 'scheme_not_https'],
    ['file:///etc/passwd', 'scheme_not_https'],
    ['data:application/pdf;base64,JVBERi0=', 'scheme_not_https'],
    ['javascript:alert(1)', 'scheme_not_https'],
    ['https://user:secret@example.com/doc.pdf', 'credentials_in_url'],
    ['https://user@example.com/doc.pdf', 'credentials_in_url'],
    ['https://:secret@example.com/doc.pdf', 'credentials_in_url'],
    ['', 'malformed_url'],
    ['example.com/doc.pdf', 'malformed_url'],
    ['/doc.pdf', 'malformed_url'],
    ['https://', 'malformed_url'],
    ['https://exa mple.com/', 'malformed_url'],
    [' https://example.com/doc.pdf', 'malformed_url'],
    ['https://example.com/\tdoc.pdf', 'malformed_url'],
    ['https://example.com/\ndoc.pdf', 'malformed_url'],
    ['https:example.com/doc.pdf', 'malformed_url'],
    ['https:\\\\example.com/doc.pdf', 'malformed_url'],
    ['https:///example.com/doc.pdf', 'malformed_url'],
    ['https://[::1/', 'malformed_url'],
    ['https://1.2.3.4.5/', 'malformed_url'],
    ['https://999999999999/', 'malformed_url'],
    ['https://256.0.0.1/', 'malformed_url'],
    ['https://[fe80::1%25eth0]/', 'malformed_url'],
    ['https://example.com:99999/', 'malformed_url'],
    ['https://example.com:0/', 'invalid_port'],
  ])('refuses %j as an invalid request (%s)', (input, reason) => {
    const error = refusal(input)
    expect(error.code).toBe('invalid_url_request')
    expect(error.status).toBe(400)
    expect(error.details).toEqual({ reason })
  })
})

describe('isLocalHostname', () => {
  it('matches local names and only those', () => {
    expect(isLocalHostname('localhost')).toBe(true)
    expect(isLocalHostname('a.b.LOCAL.')).toBe(true)
    expect(isLocalHostname('localhost.example.com')).toBe(false)
    expect(isLocalHostname('notlocal')).toBe(false)
    expect(isLocalHostname('internal.example.com')).toBe(false)
  })
})
