import { describe, expect, it } from 'vitest'
import { CPCL_STATUS_QUERY, parseCpclStatus, readCpclStatus } from '../../../hub/languages/cpcl.ts'
import { parseTsplStatus, readTsplStatus, TSPL_STATUS_QUERY } from '../../../hub/languages/tspl.ts'
import { ScriptedTransport } from './scripted-transport.ts'

describe('TSPL ESC ! ?', () => {
  it('is 1B 21 3F', () => {
    expect(TSPL_STATUS_QUERY.toString('hex')).toBe('1b213f')
  })

  it.each([
    [0x00, []],
    [0x01, ['head_open']], // bit 0 head opened
    [0x02, ['paper_jam']], // bit 1 paper jam
    [0x04, ['paper_out']], // bit 2 out of paper
    [0x08, ['ribbon_out']], // bit 3 out of ribbon
    [0x10, ['paused']], // bit 4 pause
    [0x20, ['printing']], // bit 5 printing
    [0x40, ['cover_open']], // bit 6 cover opened
    [0x80, ['other_error']], // bit 7 other error
    [0x05, ['head_open', 'paper_out']], // the manual's "out of paper and head opened"
    [0x0d, ['head_open', 'paper_out', 'ribbon_out']],
  ])('byte %i → %j', (byte, reasons) => {
    expect(parseTsplStatus(byte)).toEqual(reasons)
  })

  it('reads one byte, or null when the printer stays silent', async () => {
    const answering = new ScriptedTransport(() => Buffer.from([0x04]))
    expect(await readTsplStatus(answering, 100)).toEqual(['paper_out'])
    expect(answering.sent('hex')).toEqual(['1b213f'])
    expect(await readTsplStatus(new ScriptedTransport(() => null), 100)).toBeNull()
  })
})

describe('CPCL ESC h', () => {
  it('is 1B 68', () => {
    expect(CPCL_STATUS_QUERY.toString('hex')).toBe('1b68')
  })

  it.each([
    [0x00, []],
    [0x01, ['printing']], // bit 0 printer busy
    [0x02, ['paper_out']], // bit 1 out of paper
    [0x04, ['head_open']], // bit 2 latch open
    [0x08, ['battery_low']], // bit 3 low battery
    [0x10, ['printer_reset']], // bit 4 printer reset
    [0xe0, []], // bits 5-7 are not defined
    [0x06, ['paper_out', 'head_open']],
  ])('byte %i → %j', (byte, reasons) => {
    expect(parseCpclStatus(byte)).toEqual(reasons)
  })

  it('reads one byte, or null when the printer stays silent', async () => {
    const answering = new ScriptedTransport(() => Buffer.from([0x02]))
    expect(await readCpclStatus(answering, 100)).toEqual(['paper_out'])
    expect(answering.sent('hex')).toEqual(['1b68'])
    expect(await readCpclStatus(new ScriptedTransport(() => null), 100)).toBeNull()
  })
})
