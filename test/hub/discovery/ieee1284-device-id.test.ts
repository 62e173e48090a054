import { describe, expect, it } from 'vitest'
import {
  decodeDeviceIdReply,
  languageOfDeviceId,
  parseDeviceId,
  readDeviceId,
} from '../../../hub/discovery/ieee1284-device-id.ts'
import type { UsbControlSetup } from '../../../hub/transports/usb-binding.ts'
import { FakeUsbBinding } from '../transports/fake-usb-binding.ts'

describe('IEEE 1284 Device ID', () => {
  it('parses short and long keys without regard to case', () => {
    const id = parseDeviceId('MFG:EPSON;CMD:ESC/POS;MDL:TM-T20II;CLS:PRINTER;DES:TM-T20II;')
    expect(id).toMatchObject({ manufacturer: 'EPSON', model: 'TM-T20II', commandSet: ['ESC/POS'] })
    expect(id.fields.get('CLS')).toBe('PRINTER')
    expect(
      parseDeviceId('manufacturer:Zebra Technologies;command set: ZPL , EPL;model:ZTC GK420d;'),
    ).toMatchObject({ manufacturer: 'Zebra Technologies', model: 'ZTC GK420d', commandSet: ['ZPL', 'EPL'] })
    expect(parseDeviceId('garbage')).toMatchObject({ manufacturer: null, model: null, commandSet: [] })
  })

  it.each([
    ['MFG:EPSON;CMD:ESC/POS;', 'escpos'],
    ['MFG:Zebra;CMD:ZPL II,EPL2;', 'zpl'],
    ['MFG:Zebra;CMD:EPL2,ZPL;', 'zpl'],
    ['MFG:TSC;CMD:TSPL2;', 'tspl'],
    ['MFG:Zebra;CMD:CPCL,ZPL;', 'cpcl'],
    ['MFG:Zebra;CMD:EPL2;', null],
    ['MFG:EPSON;CMD:ESCPL2,BDC,D4,D4PX,ESCPR1;', null], // an Epson inkjet speaks ESC/P, not ESC/POS
    ['MFG:HP;CMD:PCL,PJL,POSTSCRIPT;', null],
  ])('finds the language in %s', (text, language) => {
    expect(languageOfDeviceId(parseDeviceId(text))).toBe(language)
  })

  it('decodes the length-prefixed reply, coping with wrong lengths', () => {
    const body = Buffer.from('MFG:EPSON;CMD:ESC/POS;')
    const be = Buffer.concat([Buffer.from([0, body.length + 2]), body])
    const le = Buffer.concat([Buffer.from([body.length + 2, 0]), body])
    const long = Buffer.concat([Buffer.from([0x03, 0xff]), body])
    expect(decodeDeviceIdReply(be)).toBe('MFG:EPSON;CMD:ESC/POS;')
    expect(decodeDeviceIdReply(le)).toBe('MFG:EPSON;CMD:ESC/POS;')
    expect(decodeDeviceIdReply(long)).toBe('MFG:EPSON;CMD:ESC/POS;')
    expect(decodeDeviceIdReply(Buffer.concat([be, Buffer.from([0, 0, 0])]))).toBe('MFG:EPSON;CMD:ESC/POS;')
    expect(decodeDeviceIdReply(Buffer.from([0, 2]))).toBeNull()
    expect(decodeDeviceIdReply(Buffer.alloc(0))).toBeNull()
  })

  it('asks with the Printer Class GET_DEVICE_ID request for the interface and alternate setting', async () => {
    const binding = new FakeUsbBinding()
    const printer = binding.add({ deviceId: 'MFG:EPSON;CMD:ESC/POS;' })
    const handle = await binding.open(printer.info.location)
    const seen: UsbControlSetup[] = []
    const ask = handle.controlTransferIn
    handle.controlTransferIn = (setup, length) => {
      seen.push(setup)
      return ask(setup, length)
    }
    const device = { ...printer.info, configurationIndex: 0 }
    expect(await readDeviceId(handle, device, { interfaceNumber: 2, alternateSetting: 1 })).toBe(
      'MFG:EPSON;CMD:ESC/POS;',
    )
    expect(seen).toEqual([{ requestType: 0xa1, request: 0, value: 0, index: 0x0201 }])
    await handle.close()
  })
})
