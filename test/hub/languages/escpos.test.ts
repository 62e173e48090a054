import { describe, expect, it } from 'vitest'
import {
  dleEot,
  parseErrorCause,
  parseEscposStatus,
  parseOfflineCause,
  parsePaperSensor,
  parsePrinterStatus,
  readEscposStatus,
  realTimeStatusByte,
} from '../../../hub/languages/escpos.ts'
import { answerEach, ScriptedTransport } from './scripted-transport.ts'

// Every DLE EOT reply carries bits 1 and 4 (0x12); the tables below add one documented bit at a time.
const FIXED = 0x12

describe('ESC/POS DLE EOT requests', () => {
  it('are 10 04 n for n = 1..4', () => {
    expect([1, 2, 3, 4].map((n) => dleEot(n as 1 | 2 | 3 | 4).toString('hex'))).toEqual([
      '100401',
      '100402',
      '100403',
      '100404',
    ])
  })
})

describe('ESC/POS reply validation (bits 1 and 4 set, bits 0 and 7 clear)', () => {
  it.each([
    [[0x12], 0x12],
    [[0x16], 0x16],
    [[0x7e], 0x7e],
    [[0x00], null], // bits 1 and 4 missing
    [[0x13], null], // bit 0 set
    [[0x92], null], // bit 7 set
    [[0x10], null], // bit 1 missing
    [[0x02], null], // bit 4 missing
    [[0xff], null],
    [[], null],
    [[0x12, 0x12], null], // two bytes is not one reply
  ])('%j → %s', (reply, expected) => {
    expect(realTimeStatusByte(Buffer.from(reply))).toBe(expected)
  })
})

describe('ESC/POS status bits', () => {
  it.each([
    ['n=1 nothing set', parsePrinterStatus, FIXED, []],
    ['n=1 bit 2 drawer pin 3 high (not health)', parsePrinterStatus, FIXED | 0x04, []],
    ['n=1 bit 3 offline', parsePrinterStatus, FIXED | 0x08, ['printer_offline']],
    [
      'n=1 bit 5 waiting for online recovery',
      parsePrinterStatus,
      FIXED | 0x20,
      ['waiting_for_online_recovery'],
    ],
    ['n=1 bit 6 paper feed button pressed', parsePrinterStatus, FIXED | 0x40, ['paper_feed_button']],
    ['n=2 nothing set', parseOfflineCause, FIXED, []],
    ['n=2 bit 2 cover open', parseOfflineCause, FIXED | 0x04, ['cover_open']],
    ['n=2 bit 3 feeding by button', parseOfflineCause, FIXED | 0x08, ['paper_feed_button']],
    ['n=2 bit 5 paper-end stop', parseOfflineCause, FIXED | 0x20, ['paper_end_stop']],
    ['n=2 bit 6 error occurred', parseOfflineCause, FIXED | 0x40, ['error_reported']],
    ['n=3 nothing set', parseErrorCause, FIXED, []],
    ['n=3 bit 2 mechanical error', parseErrorCause, FIXED | 0x04, ['mechanical_error']],
    ['n=3 bit 3 autocutter error', parseErrorCause, FIXED | 0x08, ['cutter_error']],
    ['n=3 bit 5 unrecoverable error', parseErrorCause, FIXED | 0x20, ['unrecoverable_error']],
    ['n=3 bit 6 auto-recoverable error', parseErrorCause, FIXED | 0x40, ['auto_recoverable_error']],
    ['n=4 paper adequate and present', parsePaperSensor, FIXED, []],
    ['n=4 bits 2+3 near end', parsePaperSensor, FIXED | 0x0c, ['paper_near_end']],
    ['n=4 bit 2 alone near end', parsePaperSensor, FIXED | 0x04, ['paper_near_end']],
    ['n=4 bit 3 alone near end', parsePaperSensor, FIXED | 0x08, ['paper_near_end']],
    ['n=4 bits 5+6 paper not present', parsePaperSensor, FIXED | 0x60, ['paper_out']],
    ['n=4 bit 5 alone paper not present', parsePaperSensor, FIXED | 0x20, ['paper_out']],
    ['n=4 bit 6 alone paper not present', parsePaperSensor, FIXED | 0x40, ['paper_out']],
    ['n=4 empty roll', parsePaperSensor, FIXED | 0x6c, ['paper_near_end', 'paper_out']],
  ] as const)('%s', (_name, parse, byte, reasons) => {
    expect(parse(byte)).toEqual(reasons)
  })

  it('combines the four replies in order, each reason once', () => {
    expect(parseEscposStatus({ 1: FIXED | 0x08, 2: FIXED | 0x0c, 3: FIXED, 4: FIXED })).toEqual([
      'printer_offline',
      'cover_open',
      'paper_feed_button',
    ])
  })
})

describe('readEscposStatus', () => {
  /** A printer that answers each DLE EOT n with `byN[n]`, and leaves the rest unanswered. */
  const replies = (byN: Record<number, number[]>) =>
    new ScriptedTransport((request) =>
      answerEach(request, 3, (query) => (byN[query[2]!] ? Buffer.from(byN[query[2]!]!) : null)),
    )
  const ALL_FOUR = '100401100402100403100404'

  it('asks DLE EOT 1, 2, 3, 4 in one write and parses every reply', async () => {
    const transport = replies({ 1: [0x1a], 2: [0x32], 3: [0x12], 4: [0x7e] })
    expect(await readEscposStatus(transport, 100)).toEqual([
      'printer_offline',
      'paper_end_stop',
      'paper_near_end',
      'paper_out',
    ])
    expect(transport.sent('hex')).toEqual([ALL_FOUR])
  })

  it('is null when DLE EOT 1 gets no reply', async () => {
    const transport = replies({})
    expect(await readEscposStatus(transport, 100)).toBeNull()
    expect(transport.sent('hex')).toEqual([ALL_FOUR])
  })

  it('treats a reply without the fixed bits as no reply', async () => {
    expect(await readEscposStatus(replies({ 1: [0x00], 2: [0x12], 3: [0x12], 4: [0x12] }), 100)).toBeNull()
  })

  it('keeps what it has when a later request goes unanswered', async () => {
    const transport = replies({ 1: [0x12], 2: [0x16] })
    expect(await readEscposStatus(transport, 100)).toEqual(['cover_open', 'incomplete_status_reply'])
    expect(transport.sent('hex')).toEqual([ALL_FOUR])
  })

  it('stops reading at the first reply without the fixed bits', async () => {
    const transport = replies({ 1: [0x12], 2: [0x16], 3: [0x00], 4: [0x7e] })
    expect(await readEscposStatus(transport, 100)).toEqual(['cover_open', 'incomplete_status_reply'])
  })

  it('asks one request at a time when more than four bytes came back together', async () => {
    // An unsolicited byte arrived with the four replies: they cannot be told apart by position.
    const transport = new ScriptedTransport((request) =>
      request.length > 3
        ? Buffer.from([0x12, 0x12, 0x12, 0x12, 0x12])
        : Buffer.from([request[2] === 4 ? 0x7e : 0x12]),
    )
    expect(await readEscposStatus(transport, 100)).toEqual(['paper_near_end', 'paper_out'])
    expect(transport.sent('hex')).toEqual([ALL_FOUR, '100401', '100402', '100403', '100404'])
  })
})
