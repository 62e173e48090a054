import { describe, expect, it } from 'vitest'
import { assertPublicAddress, classifyAddress, isPublicAddress } from '../../../cloud/fetch/ip-policy.ts'
import { ApiError } from '../../../print-api/api-error.ts'

const refused: [string, string][] = [
  // IPv4, IANA IPv4 Special-Purpose Address Registry
  ['0.0.0.0', 'unspecified_address'],
  ['0.255.255.255', 'unspecified_address'],
  ['127.0.0.1', 'loopback_address'],
  ['127.255.255.254', 'loopback_address'],
  ['10.0.0.1', 'private_address'],
  ['10.255.255.255', 'private_address'],
  ['172.16.0.1', 'private_address'],
  ['172.31.255.255', 'private_address'],
  ['192.168.0.1', 'private_address'],
  ['192.168.255.255', 'private_address'],
  ['169.254.0.1', 'link_local_address'],
  ['169.254.169.254', 'link_local_address'],
  ['100.64.0.1', 'cgnat_address'],
  ['100.127.255.255', 'cgnat_address'],
  ['224.0.0.1', 'multicast_address'],
  ['239.255.255.250', 'multicast_address'],
  ['255.255.255.255', 'broadcast_address'],
  ['240.0.0.1', 'reserved_address'],
  ['255.255.255.254', 'reserved_address'],
  ['192.0.0.8', 'reserved_address'],
  ['192.0.2.1', 'reserved_address'],
  ['192.88.99.1', 'reserved_address'],
  ['198.18.0.1', 'reserved_address'],
  ['198.19.255.255', 'reserved_address'],
  ['198.51.100.7', 'reserved_address'],
  ['203.0.113.9', 'reserved_address'],
  // IPv6, IANA IPv6 Special-Purpose Address Registry
  ['::', 'unspecified_address'],
  ['0:0:0:0:0:0:0:0', 'unspecified_address'],
  ['::1', 'loopback_address'],
  ['0:0:0:0:0:0:0:1', 'loopback_address'],
  ['fe80::1', 'link_local_address'],
  ['fe80::1%eth0', 'link_local_address'],
  ['febf:ffff::1', 'link_local_address'],
  ['fc00::1', 'unique_local_address'],
  ['fd12:3456:789a::1', 'unique_local_address'],
  ['ff02::1', 'multicast_address'],
  ['ff05::1:3', 'multicast_address'],
  ['::ffff:127.0.0.1', 'ipv4_mapped_address'],
  ['::ffff:7f00:1', 'ipv4_mapped_address'],
  ['::ffff:8.8.8.8', 'ipv4_mapped_address'],
  ['0:0:0:0:0:ffff:a9fe:a9fe', 'ipv4_mapped_address'],
  ['::127.0.0.1', 'ipv4_compatible_address'],
  ['::8.8.8.8', 'ipv4_compatible_address'],
  ['64:ff9b::127.0.0.1', 'loopback_address'],
  ['64:ff9b::a00:1', 'private_address'],
  ['64:ff9b::169.254.169.254', 'link_local_address'],
  ['64:ff9b:1::8.8.8.8', 'reserved_address'],
  ['2002:7f00:1::', 'loopback_address'],
  ['2002:c0a8:101::1', 'private_address'],
  ['2002:a9fe:a9fe::1', 'link_local_address'],
  ['2001:db8::1', 'reserved_address'],
  ['2001:db8:ffff::1', 'reserved_address'],
  ['2001::1', 'teredo_address'],
  ['2001:0:4136:e378:8000:63bf:3fff:fdd2', 'teredo_address'],
  ['2001:2::1', 'reserved_address'],
  ['3fff::1', 'reserved_address'],
  ['fec0::1', 'reserved_address'],
  ['100::1', 'reserved_address'],
  ['5f00::1', 'reserved_address'],
  ['4000::1', 'reserved_address'],
  // Not an address at all
  ['', 'invalid_address'],
  ['localhost', 'invalid_address'],
  ['127.1', 'invalid_address'],
  ['0177.0.0.1', 'invalid_address'],
  ['2130706433', 'invalid_address'],
  ['[::1]', 'invalid_address'],
  ['1.2.3.4.5', 'invalid_address'],
]

const accepted = [
  '8.8.8.8',
  '1.1.1.1',
  '93.184.215.14',
  '100.63.255.255',
  '100.128.0.0',
  '172.15.255.255',
  '172.32.0.0',
  '169.253.255.255',
  '192.0.1.1',
  '198.17.255.255',
  '198.20.0.0',
  '223.255.255.255',
  '2606:4700:4700::1111',
  '2001:4860:4860::8888',
  '2a00:1450:4001:80b::200e',
  '64:ff9b::8.8.8.8',
  '2002:808:808::1',
  '2001:200::1',
]

describe('classifyAddress', () => {
  it.each(refused)('refuses %s as %s', (address, reason) => {
    expect(classifyAddress(address)).toEqual({ public: false, reason })
    expect(isPublicAddress(address)).toBe(false)
  })

  it.each(accepted)('accepts %s', (address) => {
    expect(classifyAddress(address)).toEqual({ public: true })
    expect(isPublicAddress(address)).toBe(true)
  })
})

describe('assertPublicAddress', () => {
  it('throws url_not_allowed with the reason', () => {
    let caught: unknown
    try {
      assertPublicAddress('169.254.169.254')
    } catch (error) {
      caught = error
    }
    expect(caught).toBeInstanceOf(ApiError)
    expect(caught).toMatchObject({
      code: 'url_not_allowed',
      status: 400,
      details: { reason: 'link_local_address' },
    })
  })

  it('returns for a public address', () => {
    expect(() => assertPublicAddress('2606:4700:4700::1111')).not.toThrow()
  })
})
