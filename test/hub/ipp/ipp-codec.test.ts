import fc from 'fast-check'
import ipp from 'ipp'
import { describe, expect, it } from 'vitest'
import { decodeIppResponse, encodeIppRequest } from '../../../hub/ipp/ipp-codec.ts'
import { IppError } from '../../../hub/ipp/ipp-error.ts'
import { ippFramingProblem } from '../../../hub/ipp/ipp-framing.ts'

/** A response as a printer would send it, written by the ipp package. */
function response(statusCode: string, groups: Record<string, unknown>): Buffer {
  return ipp.serialize({
    version: '2.0',
    statusCode,
    id: 7,
    'operation-attributes-tag': { 'attributes-charset': 'utf-8', 'attributes-natural-language': 'en' },
    ...groups,
  })
}

const printerAnswer = response('successful-ok', {
  'printer-attributes-tag': {
    'printer-state': 'stopped',
    'printer-state-reasons': ['media-empty-error', 'cover-open-warning'],
    // written as one-value sets: the package would write [600, 600, 'dpi'] as three values
    'printer-resolution-supported': [[600, 600, 'dpi']],
    'copies-supported': [[1, 99]],
    'media-col-default': {
      'media-size': { 'x-dimension': 21000, 'y-dimension': 29700 },
      'media-source': 'main',
    },
  },
})

describe('encodeIppRequest', () => {
  it('writes print-scaling, which the ipp package has no entry for, and enums given by number', () => {
    const request = encodeIppRequest(
      'Print-Job',
      3,
      { 'printer-uri': 'ipp://localhost/ipp/print', 'job-name': 'x' },
      { 'print-scaling': 'fit', 'orientation-requested': 4, copies: 2 },
    )
    const parsed = ipp.parse(request) as unknown as Record<string, Record<string, unknown>>
    expect(parsed['operation-attributes-tag']).toEqual({
      'attributes-charset': 'utf-8',
      'attributes-natural-language': 'en',
      'printer-uri': 'ipp://localhost/ipp/print',
      'job-name': 'x',
    })
    expect(parsed['job-attributes-tag']).toEqual({
      'print-scaling': 'fit',
      'orientation-requested': 'landscape',
      copies: 2,
    })
    // RFC 8010 §3.1.1: version 1.1, operation Print-Job (0x0002), the request-id
    expect([...request.subarray(0, 8)]).toEqual([1, 1, 0, 2, 0, 0, 0, 3])
  })

  it('writes a media size keyword the ipp package does not know as a keyword, not a name', () => {
    const request = encodeIppRequest('Print-Job', 1, {}, { media: 'oe_photo-l_3.5x5in' })
    const keywordMedia = Buffer.from([0x44, 0x00, 0x05, ...Buffer.from('media')])
    expect(request.includes(keywordMedia)).toBe(true)
  })

  it('refuses an enum number that does not exist', () => {
    expect(() => encodeIppRequest('Print-Job', 1, {}, { 'orientation-requested': 42 })).toThrow(
      /no enum value/,
    )
  })
})

describe('decodeIppResponse', () => {
  it('reads the status and the groups', () => {
    const decoded = decodeIppResponse(printerAnswer)
    expect(decoded.statusCode).toBe(0)
    expect(decoded.status).toBe('successful-ok')
    expect(decoded.printerAttributes).toEqual({
      'printer-state': 'stopped',
      'printer-state-reasons': ['media-empty-error', 'cover-open-warning'],
      'printer-resolution-supported': [600, 600, 'dpi'],
      'copies-supported': [1, 99],
      'media-col-default': {
        'media-size': { 'x-dimension': 21000, 'y-dimension': 29700 },
        'media-source': 'main',
      },
    })
  })

  it('gives the code of a status the ipp package does not name', () => {
    const answer = Buffer.from(response('successful-ok', {}))
    answer.writeUInt16BE(0x0599, 2)
    expect(decodeIppResponse(answer).status).toBe('0x0599')
  })

  it('reads an out-of-band value as absent, without logging', () => {
    // printer-geo-location 'unknown' (0x12): ippeveprinter sends it
    const answer = Buffer.concat([
      Buffer.from([2, 0, 0, 0, 0, 0, 0, 1, 0x04]),
      Buffer.from([0x12, 0, 20, ...Buffer.from('printer-geo-location'), 0, 0]),
      Buffer.from([0x03]),
    ])
    expect(decodeIppResponse(answer).printerAttributes).toEqual({ 'printer-geo-location': undefined })
  })

  it('refuses an answer that would send the ipp package round in circles', () => {
    // A keyword whose value length 0xfffa the package reads as -6: back to the tag, for ever.
    const loop = Buffer.from([2, 0, 0, 0, 0, 0, 0, 1, 0x04, 0x44, 0x00, 0x01, 0x61, 0xff, 0xfa, 0x03])
    expect(() => decodeIppResponse(loop)).toThrow(/not an IPP message/)
  })

  it('reads any garbled answer or refuses it with an IppError', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.nat(printerAnswer.length - 1), fc.nat(255)), { minLength: 1, maxLength: 6 }),
        fc.nat(printerAnswer.length),
        (changes, length) => {
          const garbled = Buffer.from(printerAnswer.subarray(0, Math.max(length, 9)))
          for (const [at, byte] of changes) if (at < garbled.length) garbled[at] = byte
          try {
            decodeIppResponse(garbled)
          } catch (error) {
            expect(error).toBeInstanceOf(IppError)
          }
        },
      ),
      { numRuns: 3000 },
    )
  })

  it('refuses what is not an IPP message', () => {
    for (const body of [
      Buffer.from('<html>Not here</html>'),
      Buffer.alloc(0),
      printerAnswer.subarray(0, 40),
    ]) {
      expect(() => decodeIppResponse(body)).toThrow(IppError)
    }
  })
})

describe('ippFramingProblem', () => {
  const header = [2, 0, 0, 0, 0, 0, 0, 1]
  const attribute = (tag: number, name: string, value: number[]) => [
    tag,
    0,
    name.length,
    ...Buffer.from(name),
    value.length >> 8,
    value.length & 0xff,
    ...value,
  ]
  const message = (...fields: number[][]) => Buffer.from([...header, 0x04, ...fields.flat(), 0x03])

  it('passes what the ipp package writes, collections and 1setOf values included', () => {
    expect(ippFramingProblem(printerAnswer)).toBeNull()
  })

  it.each([
    ['no end-of-attributes-tag', Buffer.from([...header, 0x04])],
    ['a name running past the end', Buffer.from([...header, 0x04, 0x44, 0x00, 0x40, 0x61])],
    ['a length the parser would read as negative', Buffer.from([...header, 0x04, 0x44, 0x80, 0x00, 0x03])],
    ['an integer that is not 4 bytes', message(attribute(0x21, 'copies', [1]))],
    ['a member name outside a collection', message(attribute(0x4a, '', [0x61]))],
    [
      'a collection value without its member name',
      message(attribute(0x34, 'media-col', []), attribute(0x21, '', [0, 0, 0, 1]), attribute(0x37, '', [])),
    ],
    ['an unended collection', message(attribute(0x34, 'media-col', []))],
    [
      'a text with language whose parts do not fill it',
      message(attribute(0x35, 'printer-info', [0, 2, 0x65, 0x6e, 0, 9, 0x61])),
    ],
  ])('finds %s', (_what, body) => {
    expect(ippFramingProblem(body)).toEqual(expect.any(String))
  })
})
