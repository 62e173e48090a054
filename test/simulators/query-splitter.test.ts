import { describe, expect, it } from 'vitest'
import { type Piece, QuerySplitter } from './query-splitter.ts'
import { LANGUAGE_STATUS } from './status-replies.ts'

const hex = (text: string) => Buffer.from(text.replace(/\s+/g, ''), 'hex')
const latin1 = (text: string) => Buffer.from(text, 'latin1')

/** Pieces as readable strings: `print:<hex>` / `query:<name>`. */
function run(language: keyof typeof LANGUAGE_STATUS, chunks: Buffer[]): string[] {
  const splitter = new QuerySplitter(LANGUAGE_STATUS[language])
  const pieces: Piece[] = [...chunks.flatMap((c) => splitter.push(c)), ...splitter.end()]
  return pieces.map((p) =>
    p.kind === 'print' ? `print:${p.bytes.toString('hex')}` : `query:${p.query.name}`,
  )
}

describe('QuerySplitter, binary languages (queries at a chunk start or after a query)', () => {
  it('recognises a query that starts a chunk, and print data glued after it', () => {
    expect(run('escpos', [hex('100401 1b40 41')])).toEqual(['query:DLE EOT 1', 'print:1b4041'])
  })

  it('recognises queries glued to each other', () => {
    expect(run('escpos', [hex('100401 100402 100404')])).toEqual([
      'query:DLE EOT 1',
      'query:DLE EOT 2',
      'query:DLE EOT 4',
    ])
  })

  it('reassembles a query split across chunks', () => {
    expect(run('escpos', [hex('10'), hex('04'), hex('03 41')])).toEqual(['query:DLE EOT 3', 'print:41'])
    expect(run('tspl', [hex('1b21'), hex('3f')])).toEqual(['query:ESC ! ?'])
  })

  it('gives back held bytes as print data when the rest is not a query', () => {
    expect(run('cpcl', [hex('1b'), hex('4041')])).toEqual(['print:1b4041'])
    expect(run('escpos', [hex('1004')])).toEqual(['print:1004']) // connection ended mid-prefix
  })

  it('recognises queries that end a chunk, after print data (TCP may deliver both at once)', () => {
    expect(run('escpos', [hex('1b40 41 100401')])).toEqual(['print:1b4041', 'query:DLE EOT 1'])
    expect(run('escpos', [hex('41 100401 100404')])).toEqual([
      'print:41',
      'query:DLE EOT 1',
      'query:DLE EOT 4',
    ])
    expect(run('cpcl', [hex('41 1b68')])).toEqual(['print:41', 'query:ESC h'])
  })

  it('leaves query bytes in the middle of a chunk alone (raster data may hold them)', () => {
    expect(run('escpos', [hex('1d763000 0100 0300 100401 ff')])).toEqual(['print:1d76300001000300100401ff'])
    expect(run('tspl', [hex('41 1b213f 42')])).toEqual(['print:411b213f42'])
  })

  it('does not take DLE EOT with another n for a status query', () => {
    expect(run('escpos', [hex('100405')])).toEqual(['print:100405'])
  })
})

describe('QuerySplitter, ZPL (queries anywhere)', () => {
  it('strips ~HS and ~HQES wherever they are', () => {
    expect(run('zpl', [latin1('^XA~HS^FDa^FS~HQES^XZ')])).toEqual([
      `print:${latin1('^XA').toString('hex')}`,
      'query:~HS',
      `print:${latin1('^FDa^FS').toString('hex')}`,
      'query:~HQES',
      `print:${latin1('^XZ').toString('hex')}`,
    ])
  })

  it('reassembles ~HQES split across chunks', () => {
    expect(run('zpl', [latin1('^XZ~H'), latin1('QE'), latin1('S')])).toEqual([
      `print:${latin1('^XZ').toString('hex')}`,
      'query:~HQES',
    ])
  })

  it('keeps other tilde commands as print data', () => {
    expect(run('zpl', [latin1('~JA~HQOD')])).toEqual([`print:${latin1('~JA~HQOD').toString('hex')}`])
    expect(run('zpl', [latin1('^XZ~H')])).toEqual([
      `print:${latin1('^XZ').toString('hex')}`,
      `print:${latin1('~H').toString('hex')}`,
    ])
  })
})
