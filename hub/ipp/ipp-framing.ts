/**
 * Checks that an IPP response is framed as RFC 8010 §3.1 says before the `ipp` package parses it. Its parser
 * reads lengths as signed 16-bit numbers and fixed-size values without looking at their length, so a
 * garbled answer could send it backwards through the buffer for ever; a message that passes this check
 * cannot. It reads structure only, not values: decoding is the package's.
 */

const END_OF_ATTRIBUTES = 0x03
/** Delimiter tags are 0x00–0x0f (RFC 8010 §3.5.1); anything from 0x10 starts an attribute. */
const FIRST_VALUE_TAG = 0x10
const EXTENSION = 0x7f
const BEG_COLLECTION = 0x34
const END_COLLECTION = 0x37
const MEMBER_ATTR_NAME = 0x4a
const TEXT_WITH_LANGUAGE = 0x35
const NAME_WITH_LANGUAGE = 0x36
/** RFC 8010 §3.9: the values whose length is fixed, by tag. */
const FIXED_LENGTHS = new Map([
  [0x21, 4], // integer
  [0x22, 1], // boolean
  [0x23, 4], // enum
  [0x31, 11], // dateTime
  [0x32, 9], // resolution
  [0x33, 8], // rangeOfInteger
])
/** The parser reads lengths as signed; none of ours may look negative to it. */
const MAX_LENGTH = 0x7fff

/** Inside a collection (RFC 8010 §3.1.6): what may come next. */
type CollectionState = 'member' | 'value' | 'more'

/** Returns a reason when `body` is not a well-framed IPP message, null when it is. */
export function ippFramingProblem(body: Buffer): string | null {
  // version-number (2), status-code (2), request-id (4): RFC 8010 §3.1.1
  if (body.length < 9) return 'shorter than an IPP header'
  let at = 8
  const read = (length: number): Buffer | null => {
    if (length > MAX_LENGTH || at + length > body.length) return null
    const bytes = body.subarray(at, at + length)
    at += length
    return bytes
  }
  // One entry per open collection, innermost last.
  const open: CollectionState[] = []
  while (at < body.length) {
    const tag = body[at++]!
    if (tag < FIRST_VALUE_TAG) {
      if (open.length > 0) return 'an attribute group starts inside a collection'
      // The parser would take 0x0f for an attribute: RFC 8010 §3.5.1 reserves it, and 0x00.
      if (tag === 0x00 || tag === 0x0f) return `reserved delimiter tag 0x${tag.toString(16)}`
      if (tag === END_OF_ATTRIBUTES) return null
      continue // begin-attribute-group-tag
    }
    const hex = `0x${tag.toString(16)}`
    if (tag === EXTENSION) return 'extension tags (0x7f) are not supported'
    const nameLength = read(2)
    const name = nameLength && read(nameLength.readUInt16BE(0))
    const valueLength = name && read(2)
    const value = valueLength && read(valueLength.readUInt16BE(0))
    if (!name || !value) return `attribute with tag ${hex} runs past the end`
    const valueProblem = fixedValueProblem(tag, value)
    if (valueProblem) return valueProblem
    const state = open.at(-1)
    if (state === undefined) {
      if (tag === MEMBER_ATTR_NAME || tag === END_COLLECTION) return `tag ${hex} outside a collection`
      if (tag === BEG_COLLECTION) open.push('member')
      continue
    }
    // RFC 8010 §3.1.6: a member name, then its value and any further values, all with empty names; the
    // collection ends with endCollection.
    if (name.length !== 0) return 'a collection member has a name where none belongs'
    if (tag === MEMBER_ATTR_NAME) {
      if (state === 'value') return 'a collection member has no value'
      open[open.length - 1] = 'value'
    } else if (tag === END_COLLECTION) {
      if (state === 'value') return 'a collection member has no value'
      open.pop()
      if (open.length > 0) open[open.length - 1] = 'more'
    } else {
      if (state === 'member') return 'a collection value comes without its member name'
      if (tag === BEG_COLLECTION) open.push('member')
      else open[open.length - 1] = 'more'
    }
  }
  return 'no end-of-attributes-tag'
}

/** RFC 8010 §3.9: values of a fixed size, and text or name with language: two length-prefixed parts. */
function fixedValueProblem(tag: number, value: Buffer): string | null {
  const hex = `0x${tag.toString(16)}`
  const fixed = FIXED_LENGTHS.get(tag)
  if (fixed !== undefined && value.length !== fixed) return `value of tag ${hex} is not ${fixed} bytes`
  if (tag !== TEXT_WITH_LANGUAGE && tag !== NAME_WITH_LANGUAGE) return null
  if (value.length < 4) return `value of tag ${hex} is too short`
  const languageLength = value.readUInt16BE(0)
  if (2 + languageLength + 2 > value.length) return `value of tag ${hex} is truncated`
  if (2 + languageLength + 2 + value.readUInt16BE(2 + languageLength) !== value.length)
    return `value of tag ${hex} has the wrong length`
  return null
}
