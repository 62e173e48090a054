import { afterEach, describe, expect, it, vi } from 'vitest'
import { probeHealth, readHealth } from '../../../hub/languages/read-health.ts'
import { TransportError } from '../../../hub/transports/transport.ts'
import type { RawLanguage } from '../../../protocol/enums.ts'
import { type PrinterSimulator, startPrinterSimulator } from '../../simulators/printer-simulator.ts'
import { ScriptedTransport } from './scripted-transport.ts'
import { TcpTestTransport } from './tcp-test-transport.ts'

const CHECKED_AT = '2030-01-02T03:04:05.000Z'
const now = () => new Date(CHECKED_AT)
/** Long enough for loopback replies under load; only the silent-printer cases wait it out. */
const timeoutMs = 2_000
const SILENT_TIMEOUT_MS = 150

const started: Array<{ close(): Promise<void> }> = []
afterEach(async () => {
  for (const thing of started.splice(0).reverse()) await thing.close()
})

async function printerAndTransport(language: RawLanguage, answersStatus = true) {
  const simulator = await startPrinterSimulator({ language, answersStatus })
  started.push(simulator)
  const transport = new TcpTestTransport(simulator.host, simulator.port)
  await transport.open()
  started.push(transport)
  return { simulator, transport }
}

type Condition = Parameters<PrinterSimulator['setCondition']>[0]

const CASES: Array<[RawLanguage, string, Condition, string, string[]]> = [
  ['escpos', 'ready', {}, 'ready', []],
  [
    'escpos',
    'paper out',
    { paperOut: true },
    'paper_out',
    ['printer_offline', 'paper_end_stop', 'paper_near_end', 'paper_out'],
  ],
  ['escpos', 'cover open', { coverOpen: true }, 'cover_open', ['printer_offline', 'cover_open']],
  ['escpos', 'paper low', { paperLow: true }, 'paper_low', ['paper_near_end']],
  [
    'escpos',
    'cover open and paper out',
    { coverOpen: true, paperOut: true },
    'cover_open',
    ['printer_offline', 'cover_open', 'paper_end_stop', 'paper_near_end', 'paper_out'],
  ],
  ['zpl', 'ready', {}, 'ready', []],
  ['zpl', 'paper out', { paperOut: true }, 'paper_out', ['paper_out']],
  ['zpl', 'cover open', { coverOpen: true }, 'cover_open', ['head_open']],
  ['zpl', 'paper low', { paperLow: true }, 'paper_low', ['paper_near_end']],
  [
    'zpl',
    'cover open and paper out',
    { coverOpen: true, paperOut: true },
    'cover_open',
    ['paper_out', 'head_open'],
  ],
  ['tspl', 'ready', {}, 'ready', []],
  ['tspl', 'paper out', { paperOut: true }, 'paper_out', ['paper_out']],
  ['tspl', 'cover open', { coverOpen: true }, 'cover_open', ['head_open']],
  // ESC ! ? has no near-end bit: a TSPL printer low on paper is simply ready.
  ['tspl', 'paper low', { paperLow: true }, 'ready', []],
  ['cpcl', 'ready', {}, 'ready', []],
  ['cpcl', 'paper out', { paperOut: true }, 'paper_out', ['paper_out']],
  ['cpcl', 'cover open', { coverOpen: true }, 'cover_open', ['head_open']],
  // ESC h has no near-end bit either.
  ['cpcl', 'paper low', { paperLow: true }, 'ready', []],
]

describe('readHealth over TCP against the printer simulator', () => {
  it.each(CASES)('%s, %s → %s %j', async (language, _name, condition, state, reasons) => {
    const { simulator, transport } = await printerAndTransport(language)
    simulator.setCondition(condition)
    expect(await readHealth(transport, language, { timeoutMs, now })).toEqual({
      state,
      reasons,
      checked_at: CHECKED_AT,
    })
    expect(simulator.received()).toHaveLength(0) // every query was recognised and stripped
  })

  it('sends each language its documented queries', async () => {
    const sent: Record<string, string[]> = {}
    for (const language of ['escpos', 'zpl', 'tspl', 'cpcl'] as const) {
      const { simulator, transport } = await printerAndTransport(language)
      await readHealth(transport, language, { timeoutMs, now })
      sent[language] = simulator.queries()
    }
    expect(sent).toEqual({
      escpos: ['DLE EOT 1', 'DLE EOT 2', 'DLE EOT 3', 'DLE EOT 4'],
      zpl: ['~HQES', '~HS'],
      tspl: ['ESC ! ?'],
      cpcl: ['ESC h'],
    })
  })

  it.each(['escpos', 'zpl', 'tspl', 'cpcl'] as const)(
    '%s printer that never answers → unknown',
    async (language) => {
      const { transport } = await printerAndTransport(language, false)
      expect(await readHealth(transport, language, { timeoutMs: SILENT_TIMEOUT_MS, now })).toEqual({
        state: 'unknown',
        reasons: ['no_status_reply'],
        checked_at: CHECKED_AT,
      })
    },
  )

  it('follows the printer as its condition changes, on one connection', async () => {
    const { simulator, transport } = await printerAndTransport('escpos')
    const states = []
    for (const condition of [
      { coverOpen: true },
      { coverOpen: false, paperLow: true },
      { paperLow: false },
    ]) {
      simulator.setCondition(condition)
      states.push((await readHealth(transport, 'escpos', { timeoutMs, now })).state)
    }
    expect(states).toEqual(['cover_open', 'paper_low', 'ready'])
    expect(simulator.connections()).toBe(1)
  })

  it('reads health on a status connection while another connection prints', async () => {
    const { simulator, transport } = await printerAndTransport('zpl')
    const printer = new TcpTestTransport(simulator.host, simulator.port)
    await printer.open()
    started.push(printer)
    const label = Buffer.from('^XA^FO50,50^A0N,30,30^FDHello^FS^XZ')
    await printer.write(label)
    expect((await readHealth(transport, 'zpl', { timeoutMs, now })).state).toBe('ready')
    expect(await simulator.waitForBytes(label.length)).toEqual(label)
    expect(simulator.connections()).toBe(2)
  })

  it('a connection dropped during the query → offline, transport_disconnected', async () => {
    const { simulator, transport } = await printerAndTransport('tspl', false)
    const reading = readHealth(transport, 'tspl', { timeoutMs: 30_000, now })
    await vi.waitFor(() => expect(simulator.queries()).toEqual(['ESC ! ?']))
    await simulator.close()
    expect(await reading).toEqual({
      state: 'offline',
      reasons: ['transport_disconnected'],
      checked_at: CHECKED_AT,
    })
  })
})

describe('probeHealth', () => {
  it('opens, reads and closes', async () => {
    const simulator = await startPrinterSimulator({ language: 'cpcl' })
    started.push(simulator)
    simulator.setCondition({ paperOut: true })
    const transport = new TcpTestTransport(simulator.host, simulator.port)
    expect((await probeHealth(transport, 'cpcl', { timeoutMs, now })).state).toBe('paper_out')
    expect(simulator.connections()).toBe(1)
    expect(
      await transport.query(Buffer.from([0x1b, 0x68]), { timeoutMs, isComplete: () => true }).catch((e) => e),
    ).toBeInstanceOf(TransportError) // closed again
  })

  it('a printer nobody listens for → offline, transport_unreachable', async () => {
    const simulator = await startPrinterSimulator({ language: 'escpos' })
    const { host, port } = simulator
    await simulator.close()
    expect(await probeHealth(new TcpTestTransport(host, port), 'escpos', { timeoutMs, now })).toEqual({
      state: 'offline',
      reasons: ['transport_unreachable'],
      checked_at: CHECKED_AT,
    })
  })
})

describe('readHealth and transport errors', () => {
  it.each(['unreachable', 'disconnected', 'write_failed', 'busy'] as const)(
    'TransportError %s → offline',
    async (kind) => {
      const transport = new ScriptedTransport(() => new TransportError(kind, 'gone'))
      expect(await readHealth(transport, 'zpl', { now })).toEqual({
        state: 'offline',
        reasons: [`transport_${kind}`],
        checked_at: CHECKED_AT,
      })
    },
  )

  it('rethrows anything that is not a TransportError (a bug, not a printer state)', async () => {
    const transport = new ScriptedTransport(() => new TypeError('bug'))
    await expect(readHealth(transport, 'escpos', { now })).rejects.toThrow(TypeError)
  })

  it('stamps checked_at with the real clock by default', async () => {
    const health = await readHealth(new ScriptedTransport(() => Buffer.from([0])), 'cpcl')
    expect(new Date(health.checked_at).toISOString()).toBe(health.checked_at)
  })
})
