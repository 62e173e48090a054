import net from 'node:net'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { type PrinterSimulator, startPrinterSimulator } from './printer-simulator.ts'
import { connectRaw, type RawClient } from './raw-client.ts'

const hex = (text: string) => Buffer.from(text.replace(/\s+/g, ''), 'hex')
const latin1 = (text: string) => Buffer.from(text, 'latin1')

const started: Array<{ close(): Promise<void> }> = []
afterEach(async () => {
  for (const thing of started.splice(0).reverse()) await thing.close()
})

async function start(...args: Parameters<typeof startPrinterSimulator>): Promise<PrinterSimulator> {
  const simulator = await startPrinterSimulator(...args)
  started.push(simulator)
  return simulator
}

async function client(simulator: PrinterSimulator): Promise<RawClient> {
  const raw = await connectRaw(simulator.port)
  started.push(raw)
  return raw
}

/** A receipt with a GS v 0 raster image whose data holds DLE EOT bytes (print data, not queries). */
const RECEIPT = Buffer.concat([
  hex('1b40 1b6101'),
  latin1('Thank you\n'),
  hex('1d763000 0400 0200'),
  hex('ff 10 04 01 10 04 02 00'),
  hex('1b6403 1d5641 03'),
])

describe('printer simulator', () => {
  it('listens on 127.0.0.1 and names itself by URI', async () => {
    const simulator = await start({ language: 'zpl', name: 'Shelf labels' })
    expect(simulator.host).toBe('127.0.0.1')
    expect(simulator.port).toBeGreaterThan(0)
    expect(simulator.uri).toBe(`socket://127.0.0.1:${simulator.port}?language=zpl&name=Shelf%20labels`)
  })

  it('records the print bytes exactly, in order, across writes', async () => {
    const simulator = await start({ language: 'escpos' })
    const raw = await client(simulator)
    const random = Buffer.from(Array.from({ length: 200_000 }, (_, i) => (i * 7919 + 13) & 0xff))
    for (const part of [RECEIPT, random, RECEIPT]) await raw.write(part)
    const expected = Buffer.concat([RECEIPT, random, RECEIPT])
    expect((await simulator.waitForBytes(expected.length)).equals(expected)).toBe(true)
    expect(simulator.queries()).toEqual([])
  })

  it('answers a query glued in front of print data and strips it', async () => {
    const simulator = await start({ language: 'escpos' })
    const raw = await client(simulator)
    await raw.write(Buffer.concat([hex('100401'), RECEIPT]))
    expect(await raw.read(1)).toEqual(hex('12'))
    expect(await simulator.waitForBytes(RECEIPT.length)).toEqual(RECEIPT)
  })

  it('answers a query that arrives in the same chunk as the end of a job', async () => {
    const simulator = await start({ language: 'escpos' })
    simulator.setCondition({ paperLow: true })
    const raw = await client(simulator)
    await raw.write(Buffer.concat([RECEIPT, hex('100404')]))
    expect(await raw.read(1)).toEqual(hex('1e'))
    expect(await simulator.waitForBytes(RECEIPT.length)).toEqual(RECEIPT)
  })

  it('answers a query that arrives one byte at a time', async () => {
    const simulator = await start({ language: 'escpos' })
    simulator.setCondition({ paperOut: true })
    const raw = await client(simulator)
    for (const byte of hex('100404')) await raw.write(Buffer.from([byte]))
    expect(await raw.read(1)).toEqual(hex('7e')) // fixed 0x12 + near end 0x0c + paper not present 0x60
    await raw.write(latin1('after'))
    expect(await simulator.waitForBytes(5)).toEqual(latin1('after'))
  })

  it('strips ZPL queries anywhere in a label, even split across writes', async () => {
    const simulator = await start({ language: 'zpl' })
    const raw = await client(simulator)
    await raw.write(latin1('^XA^FO10,10^FDHi^FS~H'))
    await raw.write(latin1('QES^XZ'))
    expect((await raw.read(4)).toString('latin1')).toBe('\x02\r\n ')
    const label = latin1('^XA^FO10,10^FDHi^FS^XZ')
    expect(await simulator.waitForBytes(label.length)).toEqual(label)
    expect(simulator.queries()).toEqual(['~HQES'])
  })

  it.each([
    ['escpos', '100401', {}, '12'],
    ['escpos', '100401', { coverOpen: true }, '1a'], // bit 3 offline
    ['escpos', '100402', { coverOpen: true }, '16'], // bit 2 cover open
    ['escpos', '100402', { paperOut: true }, '32'], // bit 5 paper-end stop
    ['escpos', '100403', { paperOut: true }, '12'],
    ['escpos', '100404', { paperLow: true }, '1e'], // bits 2+3 near end
    ['tspl', '1b213f', {}, '00'],
    ['tspl', '1b213f', { coverOpen: true, paperOut: true }, '05'], // head opened + out of paper
    ['cpcl', '1b68', {}, '00'],
    ['cpcl', '1b68', { coverOpen: true, paperOut: true }, '06'], // paper out + latch open
  ] as const)('%s %s in %j → %s', async (language, query, condition, reply) => {
    const simulator = await start({ language })
    simulator.setCondition(condition)
    const raw = await client(simulator)
    await raw.write(hex(query))
    expect((await raw.read(1)).toString('hex')).toBe(reply)
  })

  it('answers ~HQES in every condition and ~HS only while media is in and the head closed', async () => {
    const simulator = await start({ language: 'zpl' })
    const raw = await client(simulator)
    const errors = async () => {
      await raw.write(latin1('~HQES'))
      let reply = ''
      while (!reply.includes('\x03')) reply += (await raw.read(1)).toString('latin1')
      return /ERRORS:\s+(\d \d{8} \w{8})/.exec(reply)?.[1]
    }
    simulator.setCondition({ paperOut: true, coverOpen: true })
    expect(await errors()).toBe('1 00000000 00000005')
    await raw.write(latin1('~HS')) // silent: a real printer does not answer ~HS with the head open
    simulator.setCondition({ paperOut: false, coverOpen: false })
    await raw.write(latin1('~HS'))
    const hs = (await raw.read(10)).toString('latin1')
    expect(hs.startsWith('\x02030,0,0,')).toBe(true) // the first reply byte is the second ~HS's answer
    expect(simulator.queries()).toEqual(['~HQES', '~HS', '~HS'])
  })

  it('strips but does not answer queries while told not to answer', async () => {
    const simulator = await start({ language: 'tspl', answersStatus: false })
    const raw = await client(simulator)
    await raw.write(hex('1b213f'))
    await vi.waitFor(() => expect(simulator.queries()).toHaveLength(1))
    simulator.setAnswersStatus(true)
    simulator.setCondition({ paperOut: true })
    await raw.write(hex('1b213f'))
    expect(await raw.read(1)).toEqual(hex('04')) // the only reply is to the second query
    expect(simulator.received()).toHaveLength(0)
  })

  it('serves a status connection and a print connection at once', async () => {
    const simulator = await start({ language: 'cpcl' })
    const [status, print] = [await client(simulator), await client(simulator)]
    const label = latin1('! 0 200 200 210 1\r\nTEXT 4 0 30 40 Hello\r\nPRINT\r\n')
    await print.write(label.subarray(0, 10))
    await status.write(hex('1b68'))
    await print.write(label.subarray(10))
    expect(await status.read(1)).toEqual(hex('00'))
    expect(await simulator.waitForBytes(label.length)).toEqual(label)
    expect(simulator.connections()).toBe(2)
  })

  it('streams print data to listeners until they unsubscribe; clear() forgets what was received', async () => {
    const simulator = await start({ language: 'tspl' })
    const seen: Buffer[] = []
    const unsubscribe = simulator.onData((bytes) => seen.push(bytes))
    const raw = await client(simulator)
    await raw.write(latin1('CLS\r\n'))
    await simulator.waitForBytes(5)
    unsubscribe()
    simulator.clear()
    expect(simulator.received()).toHaveLength(0)
    await raw.write(latin1('PRINT 1\r\n'))
    expect(await simulator.waitForBytes(9)).toEqual(latin1('PRINT 1\r\n'))
    expect(Buffer.concat(seen)).toEqual(latin1('CLS\r\n'))
  })

  it('waitForBytes rejects on its timeout and when the simulator closes', async () => {
    const simulator = await startPrinterSimulator({ language: 'escpos' })
    await expect(simulator.waitForBytes(1, 20)).rejects.toThrow(/waited for 1 bytes, received 0/)
    const pending = simulator.waitForBytes(1)
    await simulator.close()
    await expect(pending).rejects.toThrow(/closed/)
  })

  it('close() drops every connection and stops listening', async () => {
    const simulator = await startPrinterSimulator({ language: 'zpl' })
    const raws = [await connectRaw(simulator.port), await connectRaw(simulator.port)]
    await simulator.close()
    await Promise.all(raws.map((raw) => raw.closed))
    const refused = await new Promise<string>((resolve) => {
      const socket = net.connect({ host: '127.0.0.1', port: simulator.port })
      socket.once('connect', () => {
        socket.destroy()
        resolve('connected')
      })
      socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? 'error'))
    })
    expect(refused).toBe('ECONNREFUSED')
    await simulator.close() // twice is fine
  })

  it('refuses a port that is taken', async () => {
    const simulator = await start({ language: 'escpos' })
    await expect(startPrinterSimulator({ language: 'escpos', port: simulator.port })).rejects.toThrow(
      /EADDRINUSE/,
    )
  })
})
