import { describe, expect, it } from 'vitest'
import { IppUriError, parseIppUri } from '../../../hub/ipp/ipp-printer.ts'

describe('parseIppUri', () => {
  it('reads an ipp:// URI, on port 631 unless it says otherwise', () => {
    expect(parseIppUri('ipp://printer.local/ipp/print')).toEqual({
      printerUri: 'ipp://printer.local/ipp/print',
      secure: false,
      host: 'printer.local',
      port: 631,
      path: '/ipp/print',
    })
    expect(parseIppUri('ipp://10.0.0.7:8631/printers/front')).toMatchObject({
      port: 8631,
      path: '/printers/front',
    })
  })

  it('reads ipps:// as TLS and an IPv6 literal without its brackets', () => {
    expect(parseIppUri('ipps://[fe80::1]/ipp/print?queue=2')).toEqual({
      printerUri: 'ipps://[fe80::1]/ipp/print?queue=2',
      secure: true,
      host: 'fe80::1',
      port: 631,
      path: '/ipp/print?queue=2',
    })
  })

  it('takes a URI without a path as the resource /', () => {
    expect(parseIppUri('ipp://printer.local')).toMatchObject({
      path: '/',
      printerUri: 'ipp://printer.local/',
    })
  })

  it.each([
    ['http://printer.local/ipp/print'],
    ['socket://10.0.0.5:9100'],
    ['ipp://'],
    ['not a uri'],
    ['ipp://admin:secret@printer.local/ipp/print'],
  ])('refuses %s', (uri) => {
    expect(() => parseIppUri(uri)).toThrow(IppUriError)
  })
})
