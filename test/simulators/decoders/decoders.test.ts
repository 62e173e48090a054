import { afterEach, describe, expect, it } from 'vitest'
import { startPrinterSimulator } from '../printer-simulator.ts'
import { connectRaw } from '../raw-client.ts'
import { cpclTexts, decodeCpcl } from './cpcl.ts'
import { decodeEscpos, endsWithCut, escposCommands, escposText } from './escpos.ts'
import { decodeTspl, tsplTexts } from './tspl.ts'
import { decodeZpl, zplFieldData, zplLabels } from './zpl.ts'

const hex = (text: string) => Buffer.from(text.replace(/\s+/g, ''), 'hex')
const latin1 = (text: string) => Buffer.from(text, 'latin1')

const RECEIPT = Buffer.concat([
  hex('1b40 1b6101 1b2130'),
  latin1('CAFE\n'),
  hex('1b2100 1b4501'),
  latin1('Thank you\n'),
  hex('1d6b02'),
  latin1('4006381333931'),
  hex('00'),
  hex('1d286b 0300 315130'), // GS ( k: print QR
  hex('1d763000 0200 0200 0a1b 1d0a'), // raster whose data holds LF, ESC and GS bytes
  hex('1b2a00 0300 0a0a0a'), // ESC * 8-dot single density, 3 columns
  hex('1b6403 1d5641 03'),
])

const closers: Array<() => Promise<void>> = []
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close()
})

describe('ESC/POS decoder', () => {
  it('splits a receipt into text and commands, skipping image data', () => {
    const tokens = decodeEscpos(RECEIPT)
    expect(escposText(tokens)).toBe('CAFE\nThank you\n') // bar code data belongs to GS k
    expect(escposCommands(tokens)).toEqual([
      ...['ESC @', 'ESC a', 'ESC !', 'LF', 'ESC !', 'ESC E', 'LF', 'GS k', 'GS ( k', 'GS v 0', 'ESC *'],
      ...['ESC d', 'GS V'],
    ])
    expect(endsWithCut(tokens)).toBe(true)
    expect(endsWithCut(decodeEscpos(hex('1b40 41 0a')))).toBe(false)
  })

  it('decodes what a simulated receipt printer received', async () => {
    const simulator = await startPrinterSimulator({ language: 'escpos' })
    closers.push(() => simulator.close())
    const raw = await connectRaw(simulator.port)
    closers.push(() => raw.close())
    await raw.write(RECEIPT)
    const tokens = decodeEscpos(await simulator.waitForBytes(RECEIPT.length))
    expect(escposText(tokens)).toContain('Thank you')
    expect(endsWithCut(tokens)).toBe(true)
  })
})

describe('ZPL decoder', () => {
  it('splits labels into commands and field data', () => {
    const zpl = latin1('^XA\n^FO50,50^A0N,30,30^FDHello, world^FS\n^FO50,100^BCN,60^FD12345^FS\n^XZ~JA')
    const commands = decodeZpl(zpl)
    expect(commands.map((c) => c.command)).toEqual([
      ...['^XA', '^FO', '^A', '^FD', '^FS', '^FO', '^BC', '^FD', '^FS', '^XZ', '~JA'],
    ])
    expect(commands[2]).toEqual({ command: '^A', params: '0N,30,30' })
    const labels = zplLabels(commands)
    expect(labels).toHaveLength(1)
    expect(zplFieldData(labels[0]!)).toEqual(['Hello, world', '12345'])
  })
})

describe('TSPL decoder', () => {
  it('splits lines into commands and takes BITMAP data by its size', () => {
    const tspl = Buffer.concat([
      latin1('SIZE 50 mm,30 mm\r\nCLS\r\nTEXT 10,10,"3",0,1,1,"Thank you"\r\n'),
      latin1('BITMAP 0,0,2,2,0,'),
      hex('0a0d 0a0d'), // data that looks like line breaks
      latin1('\r\nPRINT 1,1\r\n'),
    ])
    const commands = decodeTspl(tspl)
    expect(commands.map((c) => c.command)).toEqual(['SIZE', 'CLS', 'TEXT', 'BITMAP', 'PRINT'])
    expect(commands[3]).toEqual({ command: 'BITMAP', args: '0,0,2,2,0', data: hex('0a0d0a0d') })
    expect(tsplTexts(commands)).toEqual(['Thank you'])
  })
})

describe('CPCL decoder', () => {
  it('splits lines into commands and takes CG data by its size', () => {
    const cpcl = Buffer.concat([
      latin1('! 0 200 200 210 1\r\nTEXT 4 0 30 40 Hello World\r\nCG 1 3 0 0 '),
      hex('0a 0d 21'),
      latin1('\r\nFORM\r\nPRINT\r\n'),
    ])
    const commands = decodeCpcl(cpcl)
    expect(commands.map((c) => c.command)).toEqual(['!', 'TEXT', 'CG', 'FORM', 'PRINT'])
    expect(commands[0]!.args).toBe('0 200 200 210 1')
    expect(commands[2]!.data).toEqual(hex('0a0d21'))
    expect(cpclTexts(commands)).toEqual(['Hello World'])
  })
})
