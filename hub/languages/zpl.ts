import { deflateSync } from 'node:zlib'
import type { Transport } from '../transports/transport.ts'
import { type Bitmap, bytesPerRow, checkBitmap } from './bitmap.ts'
import { crc16Xmodem } from './crc16-xmodem.ts'
import { type StatusReason, uniqueReasons } from './health-state.ts'
import type { LanguageDriver } from './language-driver.ts'
import { LABEL_DEFAULTS } from './media-defaults.ts'
import { encodeRasterJob, type RasterEncoding, type RasterOptions } from './raster-job.ts'

/**
 * ZPL status, from the Zebra "ZPL II Programming Guide":
 * - `~HQES` (Host Query, query type ES): one framed block, `STX CR LF PRINTER STATUS CR LF ERRORS: f
 *   gggggggg hhhhhhhh CR LF WARNINGS: f gggggggg hhhhhhhh CR LF ETX`, where f is 1 when any flag is set and
 *   hhhhhhhh (nibbles 8..1, nibble 1 rightmost) carries the flags of tables "Error Flags (~WQES)" and
 *   "Warning Flags (~WQES)". It answers in every printer state.
 * - `~HS` (Host Status Return): three framed strings `STX ... ETX CR LF`. The printer sends NOTHING while
 *   media is out, ribbon is out, the head is open, the rewinder is full or the head is over temperature.
 * So ~HQES goes first; when it already shows one of those conditions, ~HS's answer is not waited for (it
 * would only time out). When ~HQES is unsupported (older firmware), ~HS alone decides.
 */
export const HOST_QUERY_ERROR_STATUS = Buffer.from('~HQES', 'latin1')
export const HOST_STATUS = Buffer.from('~HS', 'latin1')

const STX = 0x02
const ETX = 0x03

/** ~HQES error flags, bit = position in the 32-bit value of nibbles 8..1 ("Error Flags (~WQES)"). */
const HQES_ERROR_BITS: ReadonlyArray<readonly [number, StatusReason]> = [
  [0x1, 'paper_out'], // nibble 1 value 1: media out
  [0x2, 'ribbon_out'], // nibble 1 value 2: ribbon out
  [0x4, 'head_open'], // nibble 1 value 4: head open
  [0x8, 'cutter_error'], // nibble 1 value 8: cutter fault
  [0x10, 'head_over_temperature'], // nibble 2 value 1: printhead over temperature
  [0x20, 'motor_over_temperature'], // nibble 2 value 2: motor over temperature
  [0x40, 'bad_printhead_element'], // nibble 2 value 4: bad printhead element
  [0x80, 'printhead_detection_error'], // nibble 2 value 8: printhead detection error
  [0x100, 'invalid_firmware_config'], // nibble 3 value 1: invalid firmware configuration
  [0x200, 'printhead_thermistor_open'], // nibble 3 value 2: printhead thermistor open
  [0x1000, 'paper_jam'], // nibble 4 value 1: paper jam during retract (KR403)
  [0x2000, 'presenter_error'], // nibble 4 value 2: presenter not running (KR403)
  [0x4000, 'paper_jam'], // nibble 4 value 4: paper feed error (KR403)
  [0x8000, 'paper_jam'], // nibble 4 value 8: clear paper path failed (KR403)
  [0x10000, 'paused'], // nibble 5 value 1: paused (KR403)
  [0x20000, 'presenter_error'], // nibble 5 value 2: retract function timed out (KR403)
  [0x40000, 'black_mark_error'], // nibble 5 value 4: black mark calibrate error (KR403)
  [0x80000, 'black_mark_error'], // nibble 5 value 8: black mark not found (KR403)
]

/** ~HQES warning flags ("Warning Flags (~WQES)"); nibbles 2-3 are KR403 sensor states, not health. */
const HQES_WARNING_BITS: ReadonlyArray<readonly [number, StatusReason]> = [
  [0x1, 'calibrate_media'], // nibble 1 value 1: need to calibrate media
  [0x2, 'clean_printhead'], // nibble 1 value 2: clean printhead
  [0x4, 'replace_printhead'], // nibble 1 value 4: replace printhead
  [0x8, 'paper_near_end'], // nibble 1 value 8: paper-near-end sensor
]

/** The conditions in which ~HS stays silent (~HS: "will not send a response ... if"). */
const SILENT_HS_REASONS: readonly StatusReason[] = [
  'paper_out',
  'ribbon_out',
  'head_open',
  'head_over_temperature',
]

function countByte(reply: Buffer, byte: number): number {
  let count = 0
  for (const b of reply) if (b === byte) count++
  return count
}

export function isHsComplete(reply: Buffer): boolean {
  return countByte(reply, ETX) >= 3
}

const FLAGS_LINE = (label: string) =>
  new RegExp(`${label}:\\s*([01])\\s+([0-9A-Fa-f]{8})\\s+([0-9A-Fa-f]{8})`)

function flagsFrom(text: string, label: string): number | null {
  const match = FLAGS_LINE(label).exec(text)
  return match ? Number.parseInt(match[3]!, 16) : null
}

/** Parses a ~HQES reply; null when it is not one (no ERRORS and WARNINGS lines). */
export function parseHqes(reply: Buffer): StatusReason[] | null {
  const text = reply.toString('latin1')
  const errors = flagsFrom(text, 'ERRORS')
  const warnings = flagsFrom(text, 'WARNINGS')
  if (errors === null || warnings === null) return null
  const reasons: StatusReason[] = []
  for (const [bit, reason] of HQES_ERROR_BITS) if (errors & bit) reasons.push(reason)
  for (const [bit, reason] of HQES_WARNING_BITS) if (warnings & bit) reasons.push(reason)
  return uniqueReasons(reasons)
}

/** The comma-separated fields of each framed string (`STX fields ETX`). */
function framedStrings(reply: Buffer): string[][] {
  const strings: string[][] = []
  let at = 0
  for (;;) {
    const start = reply.indexOf(STX, at)
    if (start < 0) break
    const end = reply.indexOf(ETX, start)
    if (end < 0) break
    strings.push(reply.toString('latin1', start + 1, end).split(','))
    at = end + 1
  }
  return strings
}

const flag = (field: string | undefined) => field?.trim() === '1'
const count = (field: string | undefined) => Number.parseInt(field?.trim() ?? '', 10) || 0

/**
 * Parses a ~HS reply; null when it is not three framed strings of the documented shape.
 * String 1 `aaa,b,c,dddd,eee,f,g,h,iii,j,k,l`: b paper out, c pause, eee formats in the receive buffer,
 * f buffer full, h partial format in progress, j corrupt RAM (configuration lost), k under temperature,
 * l over temperature. String 2 `mmm,n,o,p,q,r,s,t,uuuuuuuu,v,www`: o head up, p ribbon out, t label waiting
 * (peel-off mode), uuuuuuuu labels remaining in batch. String 3 `xxxx,y` (password, static RAM) is unused.
 */
export function parseHs(reply: Buffer): StatusReason[] | null {
  const [one, two] = framedStrings(reply)
  if (!one || !two || one.length < 12 || two.length < 11) return null
  const reasons: StatusReason[] = []
  if (flag(one[1])) reasons.push('paper_out')
  if (flag(one[2])) reasons.push('paused')
  if (count(one[4]) > 0 || flag(one[7])) reasons.push('printing')
  if (flag(one[5])) reasons.push('receive_buffer_full')
  if (flag(one[9])) reasons.push('config_lost')
  if (flag(one[10])) reasons.push('head_under_temperature')
  if (flag(one[11])) reasons.push('head_over_temperature')
  if (flag(two[2])) reasons.push('head_open')
  if (flag(two[3])) reasons.push('ribbon_out')
  if (flag(two[7])) reasons.push('label_waiting')
  if (count(two[8]) > 0) reasons.push('printing')
  return uniqueReasons(reasons)
}

/** Both queries in one write: the printer answers each tilde command as it receives it, in order. */
const BOTH_QUERIES = Buffer.concat([HOST_QUERY_ERROR_STATUS, HOST_STATUS])

/** The reply to both queries split in two: the ~HQES block, if the first block is one, and what follows. */
function splitReplies(reply: Buffer): { hqes: Buffer | null; hs: Buffer } {
  const start = reply.indexOf(STX)
  const end = start < 0 ? -1 : reply.indexOf(ETX, start)
  const first = end < 0 ? null : reply.subarray(0, end + 1)
  if (first === null || parseHqes(first) === null) return { hqes: null, hs: reply }
  return { hqes: first, hs: reply.subarray(end + 1) }
}

/**
 * Whether both answers are in: the ~HQES block and ~HS's three strings, or the ~HQES block alone when it shows
 * a condition in which ~HS stays silent, or ~HS's three strings alone (firmware without ~HQES).
 */
function isBothComplete(reply: Buffer): boolean {
  const { hqes, hs } = splitReplies(reply)
  if (hqes === null) return isHsComplete(hs)
  return parseHqes(hqes)!.some((reason) => SILENT_HS_REASONS.includes(reason)) || isHsComplete(hs)
}

/**
 * ~HQES and ~HS asked together (one round trip to the printer; on USB one wait for stale bytes rather than
 * two), merged; null when neither answers. ~HS is not waited for when ~HQES shows a condition in which it
 * stays silent.
 */
export async function readZplStatus(transport: Transport, timeoutMs: number): Promise<StatusReason[] | null> {
  const reply = await transport.query(BOTH_QUERIES, { timeoutMs, isComplete: isBothComplete, partial: true })
  if (reply === null) return null
  const split = splitReplies(reply)
  const hqes = split.hqes === null ? null : parseHqes(split.hqes)
  if (hqes?.some((reason) => SILENT_HS_REASONS.includes(reason))) return hqes
  const hs = isHsComplete(split.hs) ? parseHs(split.hs) : null
  if (hqes === null) return hs
  if (hs === null) return [...hqes, 'host_status_no_reply']
  return uniqueReasons([...hqes, ...hs])
}

/**
 * `^GFA,b,c,d,:Z64:data:crc`, ZPL II Programming Guide ^GF "Graphic Field" with Z64 compression: a = ASCII
 * format, b = binary byte count and c = graphic field count (both the uncompressed size), d = bytes per row;
 * data = Base64 of the zlib-deflated rows (MSB = leftmost dot, 1 = black), then the CRC-16 of that Base64
 * text as four hexadecimal digits.
 */
export function zplGraphicField(page: Bitmap): string {
  const total = page.data.length
  const base64 = deflateSync(page.data).toString('base64')
  const crc = crc16Xmodem(Buffer.from(base64, 'latin1')).toString(16).toUpperCase().padStart(4, '0')
  return `^GFA,${total},${total},${bytesPerRow(page.width)},:Z64:${base64}:${crc}`
}

/**
 * ZPL raster job: per label `^XA`, `^PW` (print width) and `^LL` (label length) in dots, the page as one
 * graphic field at `^FO0,0` ended by `^FS`, `^PQ` (print quantity) and `^XZ` (ZPL II Programming Guide).
 */
export const zplRaster: RasterEncoding = {
  prologue: Buffer.alloc(0),
  page(page, quantity) {
    checkBitmap(page)
    const label = [
      '^XA',
      `^PW${page.width}`,
      `^LL${page.height}`,
      `^FO0,0${zplGraphicField(page)}^FS`,
      `^PQ${quantity}`,
      '^XZ',
      '',
    ]
    return Buffer.from(label.join('\n'), 'latin1')
  },
}

export function encodeZplRaster(pages: readonly Bitmap[], options: RasterOptions): Buffer {
  return encodeRasterJob(zplRaster, pages, options)
}

export const zplDriver: LanguageDriver = {
  language: 'zpl',
  mediaDefaults: LABEL_DEFAULTS,
  readStatus: readZplStatus,
  raster: zplRaster,
}
