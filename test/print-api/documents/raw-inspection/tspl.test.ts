import { describe, expect, it } from 'vitest'
import { findForbiddenCommand } from '../../../../print-api/documents/raw-inspection/index.ts'

const text = (value: string) => Buffer.from(value, 'latin1')
const tspl = (bytes: Buffer | string) =>
  findForbiddenCommand(typeof bytes === 'string' ? text(bytes) : bytes, 'tspl')

const LABEL = [
  'SIZE 100 mm, 150 mm',
  'GAP 3 mm, 0 mm',
  'DIRECTION 1',
  'SPEED 4',
  'DENSITY 8',
  'SET CUTTER OFF',
  'SET TEAR ON',
  'CODEPAGE 1252',
  'CLS',
  'TEXT 40,40,"4",0,1,1,"NET WEIGHT 2 KG"',
  'TEXT 40,100,"3",0,1,1,"SET COM1 is just text here"',
  'BARCODE 40,160,"128",100,1,0,3,6,"1Z999AA10123456784"',
  'QRCODE 500,160,L,6,A,0,"https://example.com/t/1"',
  'BOX 20,20,780,1180,4',
  'BAR 20,600,760,4',
  'PRINT 1,1',
  '',
].join('\r\n')

/** BITMAP x,y,width,height,mode,data with the given data. */
function bitmap(data: Buffer, widthBytes: number): Buffer {
  return Buffer.concat([
    text(`BITMAP 40,700,${widthBytes},${data.length / widthBytes},0,`),
    data,
    text('\r\n'),
  ])
}

describe('TSPL inspection', () => {
  it('passes a normal label', () => {
    expect(tspl(LABEL)).toBeNull()
  })

  it('skips BITMAP data by width × height, even when it holds NET and INITIALPRINTER lines', () => {
    const data = Buffer.concat([
      text('\r\nNET IP "1.2.3.4","255.0.0.0","1.2.3.1"\r\nINITIALPRINTER\r\n'),
      Buffer.alloc(12, 0),
    ])
    const padded = Buffer.concat([data, Buffer.alloc((4 - (data.length % 4)) % 4, 0xff)])
    const bytes = Buffer.concat([text('SIZE 4,2\r\nCLS\r\n'), bitmap(padded, 4), text('PRINT 1\r\n')])
    expect(tspl(bytes)).toBeNull()
  })

  it('skips the data of a sized DOWNLOAD to DRAM', () => {
    const pcx = Buffer.concat([
      Buffer.from([0x0a, 5, 1, 1]),
      text('\r\nWLAN SSID "x"\r\n'),
      Buffer.alloc(100, 0),
    ])
    const bytes = Buffer.concat([
      text(`DOWNLOAD "LOGO.PCX",${pcx.length},`),
      pcx,
      text('\r\nCLS\r\nPUTPCX 10,10,"LOGO.PCX"\r\nPRINT 1\r\n'),
    ])
    expect(tspl(bytes)).toBeNull()
  })

  it('passes a BASIC program downloaded to DRAM and run', () => {
    expect(
      tspl(
        'DOWNLOAD "DEMO.BAS"\r\nSIZE 4,2\r\nCLS\r\nTEXT 10,10,"3",0,1,1,"Hi"\r\nPRINT 1\r\nEOP\r\nDEMO\r\n',
      ),
    ).toBeNull()
  })

  it.each([
    ['INITIALPRINTER\r\n', 'tspl_factory_reset', 'INITIALPRINTER', 0],
    ['SIZE 4,2\r\ninitialprinter\r\n', 'tspl_factory_reset', 'INITIALPRINTER', 10],
    ['NET IP "10.0.0.9","255.255.255.0","10.0.0.1"\r\n', 'tspl_network_settings', 'NET IP "","",""', 0],
    ['net dhcp\r\n', 'tspl_network_settings', 'NET DHCP', 0],
    ['WLAN SSID "evil"\r\n', 'tspl_wireless_settings', 'WLAN SSID ""', 0],
    ['SET COM1 19,N,8,1\r\n', 'tspl_serial_settings', 'SET COM1 19,N,8,1', 0],
    ['DOWNLOAD F,"LOGO.PCX",4,abcd\r\n', 'tspl_flash_download', 'DOWNLOAD F,"LOGO.PCX"', 0],
    ['DOWNLOAD "AUTO.BAS"\r\nCLS\r\nEOP\r\n', 'tspl_autorun_program', 'DOWNLOAD "AUTO.BAS"', 0],
    ['DOWNLOAD F,"AUTO.BAS"\r\nEOP\r\n', 'tspl_autorun_program', 'DOWNLOAD "AUTO.BAS"', 0],
    ['MOVE\r\n', 'tspl_flash_download', 'MOVE', 0],
    ['KILL F,"*"\r\n', 'tspl_flash_delete', 'KILL F,""', 0],
    ['IF A=1 THEN NET DHCP\r\n', 'tspl_network_settings', 'NET DHCP', 0],
  ])('refuses %j', (payload, reason, command, offset) => {
    expect(tspl(payload)).toEqual({ reason, command, offset })
  })

  it('checks the lines of a downloaded program, and a .BAS sent as a sized file', () => {
    expect(tspl('DOWNLOAD "SETUP.BAS"\r\nSET COM1 96,N,8,1\r\nEOP\r\n')).toMatchObject({
      reason: 'tspl_serial_settings',
      offset: 22,
    })
    const program = 'CLS\r\nWLAN OFF\r\n'
    expect(tspl(`DOWNLOAD "X.BAS",${program.length},${program}RUN "X.BAS"\r\n`)).toMatchObject({
      reason: 'tspl_wireless_settings',
      offset: 25,
    })
  })

  it('passes KILL of DRAM files and a forbidden word inside quotes', () => {
    expect(tspl('KILL "*"\r\nTEXT 1,1,"3",0,1,1,"INITIALPRINTER"\r\n')).toBeNull()
  })
})
