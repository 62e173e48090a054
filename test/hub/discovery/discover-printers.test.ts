import { existsSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { type DiscoveryDeps, discoverPrinters } from '../../../hub/discovery/index.ts'
import type { UsblpDeviceInfo } from '../../../hub/discovery/usblp-devices.ts'
import { parsePrinterUri } from '../../../hub/printers/printer-uri.ts'
import { FakeUsbBinding } from '../transports/fake-usb-binding.ts'

const EPSON_ID = 'MFG:EPSON;CMD:ESC/POS;MDL:TM-T20II;CLS:PRINTER;'
const ZEBRA_ID = 'MFG:Zebra Technologies;CMD:ZPL;MDL:ZD420;'

/** Discovery with nothing but what the test gives it (no real /dev/usb, sysfs or libusb). */
function deps(over: Partial<DiscoveryDeps> = {}): DiscoveryDeps {
  return { usb: null, listUsblp: async () => [], usblpInfo: async () => null, ...over }
}

const summary = (p: { key: string; language: string; languageSource: string; transport: object }) => ({
  key: p.key,
  language: p.language,
  languageSource: p.languageSource,
  transport: p.transport,
})

describe('discoverPrinters', () => {
  it('finds nothing, and does not throw, on a host without USB (this one)', async () => {
    const printers = await discoverPrinters()
    if (!existsSync('/dev/usb') && !existsSync('/sys/bus/usb')) expect(printers).toEqual([])
    const failing = new FakeUsbBinding()
    failing.listError = new Error('LIBUSB_ERROR_OTHER')
    const warnings: string[] = []
    const logger = { debug() {}, warn: (_: object, message: string) => warnings.push(message) }
    expect(await discoverPrinters(deps({ usb: failing, logger }))).toEqual([])
    expect(warnings).toEqual(['USB devices could not be listed; no USB printers discovered'])
  })

  it('finds USB printers and learns their language from the Device ID, the vendor, or a guess', async () => {
    const usb = new FakeUsbBinding()
    usb.add({ location: '1-1', serialNumber: 'X5E001', deviceId: EPSON_ID })
    usb.add({ location: '1-2', vendorId: 0x0a5f, productId: 0x0164, serialNumber: 'ZBR1', deviceId: null })
    usb.add({ location: '1-3', vendorId: 0x0416, productId: 0x5011, serialNumber: null, product: 'POS58' })
    usb.add({ location: '1-4', vendorId: 0x03f0, productId: 0x1234, deviceId: 'MFG:HP;CMD:PCL,PJL;' })
    const printers = await discoverPrinters(deps({ usb }))
    expect(printers.map(summary)).toEqual([
      {
        key: 'usb:0416:5011',
        language: 'escpos',
        languageSource: 'default',
        transport: { kind: 'usb', vendorId: 0x0416, productId: 0x5011, serialNumber: null },
      },
      {
        key: 'usb:04b8:0202:X5E001',
        language: 'escpos',
        languageSource: 'device_id',
        transport: { kind: 'usb', vendorId: 0x04b8, productId: 0x0202, serialNumber: 'X5E001' },
      },
      {
        key: 'usb:0a5f:0164:ZBR1',
        language: 'zpl',
        languageSource: 'vendor_id',
        transport: { kind: 'usb', vendorId: 0x0a5f, productId: 0x0164, serialNumber: 'ZBR1' },
      },
    ])
    expect(printers.map((p) => p.name)).toEqual([
      'POS58',
      'EPSON TM-T20II',
      'ZPL printer at usb://0a5f:0164/ZBR1',
    ])
    expect(printers[1]).toMatchObject({
      deviceId: EPSON_ID,
      capabilities: { media_width_mm: { min: 58, max: 80 } },
    })
    expect(printers[2]?.capabilities.media_width_mm).toEqual({ min: 25, max: 104 })
    expect(usb.openHandles).toBe(0)
  })

  it('gives the same keys on every run, whatever the order or USB port', async () => {
    const first = new FakeUsbBinding()
    first.add({ location: '1-1', serialNumber: 'A', deviceId: EPSON_ID })
    first.add({ location: '1-2', vendorId: 0x0a5f, serialNumber: 'B', deviceId: ZEBRA_ID })
    const second = new FakeUsbBinding()
    second.add({ location: '3-4.1', vendorId: 0x0a5f, serialNumber: 'B', deviceId: ZEBRA_ID })
    second.add({ location: '3-2', serialNumber: 'A', deviceId: EPSON_ID })
    const keys = async (usb: FakeUsbBinding) => (await discoverPrinters(deps({ usb }))).map((p) => p.key)
    expect(await keys(first)).toEqual(await keys(second))
    expect(await keys(first)).toEqual(await keys(first))
  })

  it('tells apart two printers of one model without serial numbers by their port', async () => {
    const usb = new FakeUsbBinding()
    usb.add({ location: '1-1', serialNumber: null })
    usb.add({ location: '1-2', serialNumber: null })
    expect((await discoverPrinters(deps({ usb }))).map((p) => p.key)).toEqual([
      'usb:04b8:0202@1-1',
      'usb:04b8:0202@1-2',
    ])
  })

  it('takes usblp devices, with a guessed language when the kernel tells nothing (no sysfs)', async () => {
    const printers = await discoverPrinters(deps({ listUsblp: async () => ['/dev/usb/lp0'] }))
    expect(printers.map(summary)).toEqual([
      {
        key: 'usblp:/dev/usb/lp0',
        language: 'escpos',
        languageSource: 'default',
        transport: { kind: 'usblp', path: '/dev/usb/lp0' },
      },
    ])
  })

  it('treats a printer seen as usblp and through libusb as one, driven through usblp, keyed by USB identity', async () => {
    const usb = new FakeUsbBinding()
    usb.add({
      location: '1-1.2',
      vendorId: 0x0a5f,
      productId: 0x0120,
      serialNumber: 'D2J',
      deviceId: ZEBRA_ID,
    })
    const sysfs: UsblpDeviceInfo = {
      deviceId: ZEBRA_ID,
      usb: { vendorId: 0x0a5f, productId: 0x0120, serialNumber: 'D2J', location: '1-1.2' },
    }
    const printers = await discoverPrinters(
      deps({ usb, listUsblp: async () => ['/dev/usb/lp0'], usblpInfo: async () => sysfs }),
    )
    expect(printers.map(summary)).toEqual([
      {
        key: 'usb:0a5f:0120:D2J',
        language: 'zpl',
        languageSource: 'device_id',
        transport: { kind: 'usblp', path: '/dev/usb/lp0' },
      },
    ])
    expect(printers[0]?.name).toBe('Zebra Technologies ZD420')
  })

  it('lets configuration win over discovery for the same device, and fills in a language it leaves out', async () => {
    const usb = new FakeUsbBinding()
    usb.add({ location: '1-1', serialNumber: 'X5E001', deviceId: 'MFG:EPSON;CMD:ESC/POS;MDL:TM-L90;' })
    usb.add({
      location: '1-2',
      vendorId: 0x1203,
      productId: 0x0230,
      serialNumber: 'T1',
      deviceId: 'CMD:TSPL2;',
    })
    const serial = parsePrinterUri('serial:/dev/ttyS0?baud=19200&language=escpos')
    const printers = await discoverPrinters(
      deps({
        usb,
        listUsblp: async () => ['/dev/usb/lp0'],
        configured: ['usb://04b8:0202?name=Kitchen', 'usblp:/dev/usb/lp0?language=cpcl&width_mm=76'],
        serialPorts: [serial],
      }),
    )
    expect(printers.map((p) => [p.key, p.name, p.language, p.languageSource])).toEqual([
      ['usb:04b8:0202', 'Kitchen', 'escpos', 'device_id'],
      ['usblp:/dev/usb/lp0', 'CPCL printer at usblp:/dev/usb/lp0', 'cpcl', 'configured'],
      ['serial:/dev/ttyS0', serial.name, 'escpos', 'configured'],
      ['usb:1203:0230:T1', 'TSPL printer at usb://1203:0230/T1', 'tspl', 'device_id'],
    ])
    expect(printers[1]?.capabilities.media_width_mm).toEqual({ min: 25, max: 76 })
  })
})
