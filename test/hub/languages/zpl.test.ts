import { describe, expect, it } from 'vitest'
import { isHsComplete, parseHqes, parseHs, readZplStatus } from '../../../hub/languages/zpl.ts'
import { ScriptedTransport } from './scripted-transport.ts'

const hex8 = (n: number) => n.toString(16).toUpperCase().padStart(8, '0')

/** A ~HQES reply as the ZPL II guide frames it. */
function hqes(errors: number, warnings = 0): Buffer {
  const line = (label: string, flags: number) => `${label} ${flags ? 1 : 0} 00000000 ${hex8(flags)}`
  const body = `\r\n  PRINTER STATUS\r\n   ${line('ERRORS:  ', errors)}\r\n   ${line('WARNINGS:', warnings)}\r\n`
  return Buffer.from(`\x02${body}\x03`, 'latin1')
}

/** A ~HS reply: three framed strings; `one`/`two` override fields by index. */
function hs(one: Record<number, string> = {}, two: Record<number, string> = {}): Buffer {
  const s1 = '030,0,0,1218,000,0,0,0,000,0,0,0'.split(',')
  const s2 = '001,0,0,0,1,2,6,0,00000000,1,000'.split(',')
  for (const [i, v] of Object.entries(one)) s1[Number(i)] = v
  for (const [i, v] of Object.entries(two)) s2[Number(i)] = v
  return Buffer.from([s1.join(','), s2.join(','), '1234,0'].map((s) => `\x02${s}\x03\r\n`).join(''), 'latin1')
}

describe('ZPL ~HQES error flags (ZPL II guide, Error Flags ~WQES)', () => {
  it.each([
    [0x0, []],
    [0x1, ['paper_out']], // nibble 1: media out
    [0x2, ['ribbon_out']], // nibble 1: ribbon out
    [0x4, ['head_open']], // nibble 1: head open
    [0x8, ['cutter_error']], // nibble 1: cutter fault
    [0x10, ['head_over_temperature']], // nibble 2
    [0x20, ['motor_over_temperature']],
    [0x40, ['bad_printhead_element']],
    [0x80, ['printhead_detection_error']],
    [0x100, ['invalid_firmware_config']], // nibble 3
    [0x200, ['printhead_thermistor_open']],
    [0x1000, ['paper_jam']], // nibble 4 (KR403): paper jam during retract
    [0x2000, ['presenter_error']], // presenter not running
    [0x4000, ['paper_jam']], // paper feed error
    [0x8000, ['paper_jam']], // clear paper path failed
    [0x10000, ['paused']], // nibble 5 (KR403)
    [0x20000, ['presenter_error']], // retract function timed out
    [0x40000, ['black_mark_error']],
    [0x80000, ['black_mark_error']],
    [0x5, ['paper_out', 'head_open']], // the guide's example: 4 + 1
    [0xb, ['paper_out', 'ribbon_out', 'cutter_error']], // the guide's example: 8 + 2 + 1
  ])('errors %s → %j', (errors, reasons) => {
    expect(parseHqes(hqes(errors))).toEqual(reasons)
  })

  it.each([
    [0x1, ['calibrate_media']],
    [0x2, ['clean_printhead']],
    [0x4, ['replace_printhead']],
    [0x8, ['paper_near_end']],
    [0xf0, []], // KR403 sensor states are not health
  ])('warnings %s → %j', (warnings, reasons) => {
    expect(parseHqes(hqes(0, warnings))).toEqual(reasons)
  })

  it('is null for anything that is not a ~HQES reply', () => {
    expect(parseHqes(Buffer.from('\x02hello\x03'))).toBeNull()
    expect(parseHqes(hs())).toBeNull()
  })
})

describe('ZPL ~HS fields (ZPL II guide, Host Status Return)', () => {
  it.each([
    ['nothing set', hs(), []],
    ['string 1 b: paper out', hs({ 1: '1' }), ['paper_out']],
    ['string 1 c: pause', hs({ 2: '1' }), ['paused']],
    ['string 1 eee: formats in buffer', hs({ 4: '002' }), ['printing']],
    ['string 1 f: buffer full', hs({ 5: '1' }), ['receive_buffer_full']],
    ['string 1 h: partial format', hs({ 7: '1' }), ['printing']],
    ['string 1 j: corrupt RAM', hs({ 9: '1' }), ['config_lost']],
    ['string 1 k: under temperature', hs({ 10: '1' }), ['head_under_temperature']],
    ['string 1 l: over temperature', hs({ 11: '1' }), ['head_over_temperature']],
    ['string 2 o: head up', hs({}, { 2: '1' }), ['head_open']],
    ['string 2 p: ribbon out', hs({}, { 3: '1' }), ['ribbon_out']],
    ['string 2 q: thermal transfer mode (not health)', hs({}, { 4: '0' }), []],
    ['string 2 t: label waiting', hs({}, { 7: '1' }), ['label_waiting']],
    ['string 2 uuuuuuuu: labels remaining', hs({}, { 8: '00000003' }), ['printing']],
  ])('%s', (_name, reply, reasons) => {
    expect(parseHs(reply)).toEqual(reasons)
  })

  it('is null without two strings of the documented length', () => {
    expect(parseHs(Buffer.from('\x021,2,3\x03\r\n\x024,5\x03\r\n\x026\x03\r\n'))).toBeNull()
  })

  it('is complete after the third ETX', () => {
    const reply = hs()
    const third = reply.lastIndexOf(0x03)
    expect(isHsComplete(reply.subarray(0, third))).toBe(false)
    expect(isHsComplete(reply.subarray(0, third + 1))).toBe(true)
  })
})

describe('readZplStatus', () => {
  /** A printer that answers each of the queries sent together, in order; null: it stays silent to that one. */
  const printer = (answers: { hqes: Buffer | null; hs: Buffer | null }) =>
    new ScriptedTransport((request) => {
      const text = request.toString('latin1')
      const replies = [
        ...(text.includes('~HQES') && answers.hqes ? [answers.hqes] : []),
        ...(text.replace('~HQES', '').includes('~HS') && answers.hs ? [answers.hs] : []),
      ]
      return replies.length > 0 ? Buffer.concat(replies) : null
    })

  /** Whether each reply the transport got was complete for the reader (a transport would wait on if not). */
  const completeness = (transport: ScriptedTransport) => {
    const complete: boolean[] = []
    const query = transport.query.bind(transport)
    transport.query = (request, options) =>
      query(request, {
        ...options,
        isComplete: (reply) => {
          complete.push(options.isComplete(reply))
          return complete.at(-1)!
        },
      })
    return complete
  }

  it('asks ~HQES and ~HS in one write and merges both', async () => {
    const transport = printer({ hqes: hqes(0, 0x8), hs: hs({ 2: '1' }) })
    expect(await readZplStatus(transport, 100)).toEqual(['paper_near_end', 'paused'])
    expect(transport.sent('latin1')).toEqual(['~HQES~HS'])
  })

  it.each([
    ['media out', 0x1],
    ['ribbon out', 0x2],
    ['head open', 0x4],
    ['head over temperature', 0x10],
  ])('does not wait for ~HS when ~HQES shows %s (~HS stays silent then)', async (_name, errors) => {
    const transport = printer({ hqes: hqes(errors), hs: null })
    // The ~HQES block alone completes the reply: a transport waits no longer for the rest.
    const complete = completeness(transport)
    const reasons = await readZplStatus(transport, 100)
    expect(complete).toEqual([true])
    expect(reasons).toEqual(parseHqes(hqes(errors)))
  })

  it('waits for ~HS while ~HQES shows nothing that silences it', async () => {
    const transport = printer({ hqes: hqes(0x8), hs: null })
    const complete = completeness(transport)
    expect(await readZplStatus(transport, 100)).toEqual(['cutter_error', 'host_status_no_reply'])
    expect(complete).toEqual([false])
  })

  it('falls back to ~HS on firmware without ~HQES', async () => {
    expect(await readZplStatus(printer({ hqes: null, hs: hs({ 1: '1' }) }), 100)).toEqual(['paper_out'])
  })

  it('notes a ~HS that stays silent while ~HQES answers', async () => {
    expect(await readZplStatus(printer({ hqes: hqes(0), hs: null }), 100)).toEqual(['host_status_no_reply'])
  })

  it('notes a ~HS cut short after its first string', async () => {
    const cut = hs().subarray(0, hs().indexOf(0x03) + 1)
    expect(await readZplStatus(printer({ hqes: hqes(0, 0x8), hs: cut }), 100)).toEqual([
      'paper_near_end',
      'host_status_no_reply',
    ])
  })

  it('waits for the ETX of the ~HQES block, and reads a block cut before it as no answer', async () => {
    const cut = hqes(0x1).subarray(0, hqes(0x1).length - 1)
    const transport = printer({ hqes: cut, hs: null })
    const complete = completeness(transport)
    expect(await readZplStatus(transport, 100)).toBeNull()
    expect(complete).toEqual([false])
  })

  it('is null when neither answers', async () => {
    expect(await readZplStatus(printer({ hqes: null, hs: null }), 100)).toBeNull()
  })
})
