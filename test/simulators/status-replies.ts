import type { RawLanguage } from '../../protocol/enums.ts'

/**
 * The status queries the simulated printers answer and the replies a real printer in each condition would
 * send. Written from the manuals independently of hub/languages so that the simulator checks the hub's
 * parsers rather than echoing them.
 */
export interface PrinterCondition {
  paperOut: boolean
  coverOpen: boolean
  paperLow: boolean
}

export interface StatusQuery {
  /** For `queries()` and logs: `DLE EOT 1`, `~HQES`, ... */
  name: string
  bytes: Buffer
  /** The reply in this condition; null when the printer stays silent. */
  reply(condition: PrinterCondition): Buffer | null
}

export interface LanguageStatus {
  queries: readonly StatusQuery[]
  /**
   * Whether a query is recognised anywhere in the byte stream (true: ZPL, whose `~` control commands are
   * text that print data never holds by accident) or only at the edges of a TCP chunk (false: the binary
   * languages, whose image data may hold the query bytes by chance). See query-splitter.ts.
   */
  anywhere: boolean
}

const bytes = (...values: number[]) => Buffer.from(values)
const text = (value: string) => Buffer.from(value, 'latin1')

// ESC/POS DLE EOT n (Epson ESC/POS reference): one byte, bits 1 and 4 fixed on, 0 and 7 fixed off.
const FIXED = 0x12

/** Printing stops when paper runs out or the cover opens, and the printer goes offline. */
const offline = (c: PrinterCondition) => c.paperOut || c.coverOpen

const ESCPOS: LanguageStatus = {
  anywhere: false,
  queries: [
    // n = 1 printer status: bit 3 offline.
    { name: 'DLE EOT 1', bytes: bytes(0x10, 0x04, 1), reply: (c) => bytes(FIXED | (offline(c) ? 0x08 : 0)) },
    // n = 2 offline cause: bit 2 cover open, bit 5 printing stopped by paper end.
    {
      name: 'DLE EOT 2',
      bytes: bytes(0x10, 0x04, 2),
      reply: (c) => bytes(FIXED | (c.coverOpen ? 0x04 : 0) | (c.paperOut ? 0x20 : 0)),
    },
    // n = 3 error cause: no error in any condition the simulator knows.
    { name: 'DLE EOT 3', bytes: bytes(0x10, 0x04, 3), reply: () => bytes(FIXED) },
    // n = 4 roll paper sensor: bits 2+3 near end, bits 5+6 paper not present (an empty roll is also "near end").
    {
      name: 'DLE EOT 4',
      bytes: bytes(0x10, 0x04, 4),
      reply: (c) => bytes(FIXED | (c.paperLow || c.paperOut ? 0x0c : 0) | (c.paperOut ? 0x60 : 0)),
    },
  ],
}

const hex8 = (value: number) => value.toString(16).toUpperCase().padStart(8, '0')
const flagsLine = (label: string, flags: number) => `${label} ${flags ? 1 : 0} 00000000 ${hex8(flags)}`

/** ZPL ~HQES: errors nibble 1 (1 media out, 4 head open), warnings nibble 1 (8 paper near end). */
function hqesReply(c: PrinterCondition): Buffer {
  const errors = (c.paperOut ? 0x1 : 0) | (c.coverOpen ? 0x4 : 0)
  const warnings = c.paperLow ? 0x8 : 0
  const lines = [
    '',
    '  PRINTER STATUS',
    `   ${flagsLine('ERRORS:  ', errors)}`,
    `   ${flagsLine('WARNINGS:', warnings)}`,
  ]
  return text(`\x02${lines.join('\r\n')}\r\n\x03`)
}

/** ZPL ~HS: three framed strings; none at all while media is out or the head is open (ZPL II guide, ~HS). */
function hsReply(c: PrinterCondition): Buffer | null {
  if (c.paperOut || c.coverOpen) return null
  const strings = ['030,0,0,1218,000,0,0,0,000,0,0,0', '001,0,0,0,1,2,6,0,00000000,1,000', '1234,0']
  return text(strings.map((s) => `\x02${s}\x03\r\n`).join(''))
}

const ZPL: LanguageStatus = {
  anywhere: true,
  queries: [
    { name: '~HQES', bytes: text('~HQES'), reply: hqesReply },
    { name: '~HS', bytes: text('~HS'), reply: hsReply },
  ],
}

// TSPL ESC ! ?: one byte; bit 0 head opened, bit 2 out of paper. No near-end bit exists.
const TSPL: LanguageStatus = {
  anywhere: false,
  queries: [
    {
      name: 'ESC ! ?',
      bytes: bytes(0x1b, 0x21, 0x3f),
      reply: (c) => bytes((c.coverOpen ? 0x01 : 0) | (c.paperOut ? 0x04 : 0)),
    },
  ],
}

// CPCL ESC h: one byte; bit 1 out of paper, bit 2 latch open. No near-end bit exists.
const CPCL: LanguageStatus = {
  anywhere: false,
  queries: [
    {
      name: 'ESC h',
      bytes: bytes(0x1b, 0x68),
      reply: (c) => bytes((c.paperOut ? 0x02 : 0) | (c.coverOpen ? 0x04 : 0)),
    },
  ],
}

export const LANGUAGE_STATUS: Record<RawLanguage, LanguageStatus> = {
  escpos: ESCPOS,
  zpl: ZPL,
  tspl: TSPL,
  cpcl: CPCL,
}
