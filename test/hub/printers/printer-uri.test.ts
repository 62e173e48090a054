import { Value } from 'typebox/value'
import { describe, expect, it } from 'vitest'
import {
  PrinterUriError,
  parsePrinterUri,
  printerUriOf,
  readPrinterUri,
} from '../../../hub/printers/printer-uri.ts'
import { PrinterCapabilities } from '../../../protocol/printer.ts'

describe('parsePrinterUri', () => {
  it('parses the documented examples', () => {
    expect(parsePrinterUri('socket://10.0.0.5:9100?language=zpl&dpi=203&width_mm=104&name=Labels')).toEqual({
      key: 'socket://10.0.0.5:9100',
      name: 'Labels',
      language: 'zpl',
      languageSource: 'configured',
      transport: { kind: 'socket', host: '10.0.0.5', port: 9100 },
      capabilities: {
        document_formats: ['raw', 'pdf'],
        raw_languages: ['zpl'],
        dpi: [203],
        default_dpi: 203,
        media_width_mm: { min: 25, max: 104 },
        media_height_mm: { min: 10, max: 1000 },
        default_media: { width_mm: 101.6, height_mm: 152.4 },
        color: false,
        duplex: false,
      },
      headDots: 832,
    })
    expect(parsePrinterUri('serial:/dev/ttyUSB0?baud=19200&language=escpos')).toMatchObject({
      key: 'serial:/dev/ttyUSB0',
      name: 'ESC/POS printer at serial:/dev/ttyUSB0',
      transport: {
        kind: 'serial',
        path: '/dev/ttyUSB0',
        baudRate: 19200,
        dataBits: 8,
        stopBits: 1,
        parity: 'none',
        flowControl: 'none',
      },
      capabilities: {
        dpi: [203],
        media_width_mm: { min: 58, max: 80 },
        media_height_mm: null,
        default_media: { width_mm: 80, height_mm: null },
      },
      headDots: 576,
    })
    expect(parsePrinterUri('usblp:/dev/usb/lp0?language=escpos')).toMatchObject({
      key: 'usblp:/dev/usb/lp0',
      transport: { kind: 'usblp', path: '/dev/usb/lp0' },
    })
    expect(parsePrinterUri('usb://04b8:0202?language=escpos')).toMatchObject({
      key: 'usb:04b8:0202',
      transport: { kind: 'usb', vendorId: 0x04b8, productId: 0x0202, serialNumber: null },
    })
  })

  it('knows the head width: 576 dots on 80 mm paper, 384 on 58 mm, 832 for 4 in labels, or what head_dots= says', () => {
    const headDots = (uri: string) => parsePrinterUri(uri).headDots
    expect(headDots('socket://127.0.0.1?language=escpos')).toBe(576)
    expect(headDots('socket://127.0.0.1?language=escpos&width_mm=58')).toBe(384)
    expect(headDots('socket://127.0.0.1?language=zpl')).toBe(832)
    expect(headDots('socket://127.0.0.1?language=tspl&dpi=300')).toBe(1232)
    expect(headDots('socket://127.0.0.1?language=escpos&head_dots=512')).toBe(512)
    expect(() => parsePrinterUri('socket://127.0.0.1?language=escpos&head_dots=0')).toThrow(/head_dots=0/)
  })

  it('states a label the URI gives as the default media, within what the printer takes', () => {
    expect(
      parsePrinterUri('socket://127.0.0.1?language=tspl&width_mm=60&height_mm=40').capabilities,
    ).toMatchObject({
      media_width_mm: { min: 25, max: 60 },
      media_height_mm: { min: 10, max: 40 },
      default_media: { width_mm: 60, height_mm: 40 },
    })
  })

  it('reads every serial line setting', () => {
    const { transport } = parsePrinterUri(
      'serial:/dev/ttyS1?baud=115200&parity=even&data_bits=7&stop_bits=2&flow=rtscts&language=cpcl',
    )
    expect(transport).toEqual({
      kind: 'serial',
      path: '/dev/ttyS1',
      baudRate: 115200,
      parity: 'even',
      dataBits: 7,
      stopBits: 2,
      flowControl: 'rtscts',
    })
    expect(
      parsePrinterUri('serial:/dev/ttyS1?stop_bits=1.5&flow=xonxoff&language=tspl').transport,
    ).toMatchObject({
      stopBits: 1.5,
      flowControl: 'xonxoff',
    })
  })

  it('gives a canonical key: default port, lower case host and hex, serial number, normalised path', () => {
    expect(parsePrinterUri('socket://Printer.Local?language=zpl').key).toBe('socket://printer.local:9100')
    expect(parsePrinterUri('SOCKET://[::1]:9101/?language=zpl').key).toBe('socket://[::1]:9101')
    expect(parsePrinterUri('usb://04B8:0E15/X5E%2F0001?name=Front').key).toBe('usb:04b8:0e15:X5E/0001')
    expect(parsePrinterUri('serial:/dev//serial/by-id/../by-id/usb-FTDI?language=escpos').key).toBe(
      'serial:/dev/serial/by-id/usb-FTDI',
    )
    // Settings are not identity: another baud rate or name is the same printer.
    expect(parsePrinterUri('serial:/dev/ttyS0?baud=9600&language=escpos').key).toBe(
      parsePrinterUri('serial:///dev/ttyS0?baud=38400&language=escpos&name=Bar').key,
    )
  })

  it('derives capabilities from language and media options', () => {
    expect(parsePrinterUri('socket://h?language=escpos&dpi=180&width_mm=48').capabilities).toMatchObject({
      dpi: [180],
      media_width_mm: { min: 48, max: 48 },
      media_height_mm: null,
    })
    expect(parsePrinterUri('socket://h?language=tspl&width_mm=60&height_mm=40').capabilities).toMatchObject({
      raw_languages: ['tspl'],
      media_width_mm: { min: 25, max: 60 },
      media_height_mm: { min: 10, max: 40 },
    })
    for (const language of ['escpos', 'zpl', 'tspl', 'cpcl']) {
      const { capabilities } = parsePrinterUri(`socket://h?language=${language}&height_mm=5`)
      expect(Value.Check(PrinterCapabilities, capabilities)).toBe(true)
    }
  })

  it('lets usb and usblp leave the language out and marks the guess', () => {
    expect(parsePrinterUri('usb://0a5f:0164')).toMatchObject({ language: 'zpl', languageSource: 'vendor_id' })
    expect(parsePrinterUri('usb://1203:0230/TSC1')).toMatchObject({
      language: 'tspl',
      languageSource: 'vendor_id',
    })
    expect(parsePrinterUri('usb://0416:5011')).toMatchObject({
      language: 'escpos',
      languageSource: 'default',
    })
    expect(parsePrinterUri('usblp:/dev/usb/lp1')).toMatchObject({
      language: 'escpos',
      languageSource: 'default',
    })
    expect(readPrinterUri('usblp:/dev/usb/lp1').language).toBeNull()
  })

  it.each([
    ['socket://10.0.0.5:9100', /language= is required for socket/],
    ['serial:/dev/ttyUSB0', /language= is required for serial/],
    ['socket://10.0.0.5:9100?language=pcl', /language "pcl" is not one of tspl, zpl, cpcl, escpos/],
    ['socket://10.0.0.5:99999?language=zpl', /port 99999/],
    ['socket://bad_host?language=zpl', /not a host name/],
    ['socket://10.0.0.5/path?language=zpl', /expected socket:\/\/HOST\[:PORT\]/],
    ['socket://h?language=zpl&lang=zpl', /unknown option "lang"/],
    ['socket://h?language=zpl&baud=9600', /unknown option "baud"/],
    ['socket://h?language=zpl&language=zpl', /given twice/],
    ['socket://h?language=zpl&dpi=20', /dpi=20 is not a whole number from 72 to 2400/],
    ['socket://h?language=zpl&width_mm=wide', /width_mm=wide/],
    ['socket://h?language=zpl&name=', /name= is empty/],
    ['serial:ttyUSB0?language=escpos', /absolute device path/],
    [
      'serial:/dev/ttyUSB0?language=escpos&parity=high',
      /parity=high is not one of none, even, odd, mark, space/,
    ],
    ['serial:/dev/ttyUSB0?language=escpos&baud=fast', /baud=fast/],
    ['usb://4b8:202', /four hex digits/],
    ['usb://04b8:0202/a/b', /usb:\/\/VID:PID/],
    ['ipp://host:631/ipp/print', /unsupported scheme "ipp:"/],
    ['/dev/usb/lp0', /expected SCHEME:TARGET/],
  ])('rejects %s', (uri, message) => {
    expect(() => parsePrinterUri(uri)).toThrow(PrinterUriError)
    expect(() => parsePrinterUri(uri)).toThrow(message)
  })
})

describe('printerUriOf', () => {
  it.each([
    'socket://10.0.0.5:9100?language=zpl',
    'socket://[fe80::1]:9101?language=cpcl&name=Back%20office&dpi=300&width_mm=76&height_mm=150',
    'serial:/dev/ttyUSB0?baud=19200&parity=odd&data_bits=7&stop_bits=2&flow=xonxoff&language=escpos',
    'usblp:/dev/usb/lp0?language=tspl',
    'usb://04b8:0202/X5E%2F0001?language=escpos&width_mm=58',
    'socket://127.0.0.1:9100?language=escpos&width_mm=76&head_dots=512',
  ])('round-trips %s', (uri) => {
    const spec = parsePrinterUri(uri)
    expect(printerUriOf(spec)).toBe(uri)
    expect(parsePrinterUri(printerUriOf(spec))).toEqual(spec)
  })

  it('always names the language, so a guessed one can be confirmed by copying the URI', () => {
    expect(printerUriOf(parsePrinterUri('usb://0a5f:0164'))).toBe('usb://0a5f:0164?language=zpl')
  })
})
