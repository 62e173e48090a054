import { deflateSync } from 'node:zlib'
import { describe, expect, it } from 'vitest'
import { findForbiddenCommand } from '../../../../print-api/documents/raw-inspection/index.ts'

const text = (value: string) => Buffer.from(value, 'latin1')
const zpl = (value: string) => findForbiddenCommand(text(value), 'zpl')

const LABEL = [
  '^XA',
  '^CI28',
  '^PW812^LL1218^LH0,0',
  '^FO50,50^A0N,40,40^FDShip to: Jane Doe^FS',
  '^FO50,120^A0N,30,30^FD1 Main Street, Springfield^FS',
  '^FO50,200^BY3^BCN,120,Y,N,N^FD>:1Z999AA10123456784^FS',
  '^FO50,400^BQN,2,6^FDMA,https://example.com/t/1^FS',
  '^FO600,50^GFA,16,16,2,FFFF0000FFFF0000FFFF0000FFFF0000^FS',
  '^FO50,600^GB700,3,3^FS',
  '^FX a comment ^FS',
  '^PQ1,0,1,Y',
  '^XZ',
].join('\r\n')

describe('ZPL inspection', () => {
  it('passes a normal shipping label', () => {
    expect(zpl(LABEL)).toBeNull()
  })

  it('passes a ^GFA graphic in hex and in :Z64: form, and ~DG hex data', () => {
    const z64 = `:Z64:${deflateSync(Buffer.alloc(200, 0xf0)).toString('base64')}:1A2B`
    expect(zpl(`^XA^FO0,0^GFA,200,200,10,${z64}^FS^XZ`)).toBeNull()
    expect(zpl('~DGR:LOGO.GRF,8,2,FFFF0000FFFF0000\r\n^XA^FO0,0^XGR:LOGO.GRF,1,1^FS^XZ')).toBeNull()
  })

  it('skips ^GFB binary data by its byte count, even when it holds ^JUS', () => {
    const data = Buffer.concat([text('^JUS~JR^NS'), Buffer.alloc(6, 0xff)])
    const bytes = Buffer.concat([
      text(`^XA^FO0,0^GFB,${data.length},${data.length},2,`),
      data,
      text('^FS^XZ'),
    ])
    expect(findForbiddenCommand(bytes, 'zpl')).toBeNull()
  })

  it('clamps the ^GFB byte count to 99999 as the printer does', () => {
    const data = Buffer.concat([Buffer.alloc(99_999, 0), text('^JUS'), Buffer.alloc(100, 0)])
    const bytes = Buffer.concat([text('^XA^FO0,0^GFB,200000,200000,100,'), data, text('^FS^XZ')])
    expect(findForbiddenCommand(bytes, 'zpl')).toMatchObject({ reason: 'zpl_save_configuration' })
  })

  it('skips ~DY binary data (format B) by its byte count', () => {
    const font = Buffer.concat([
      Buffer.alloc(10, 0),
      text('^JUS{}{"ip.addr":"1.2.3.4"}'),
      Buffer.alloc(10, 0),
    ])
    const bytes = Buffer.concat([
      text(`~DYE:FONT,B,T,${font.length},,`),
      font,
      text('^XA^A@N,30,30,E:FONT.TTF^FDx^FS^XZ'),
    ])
    expect(findForbiddenCommand(bytes, 'zpl')).toBeNull()
  })

  it.each([
    ['^XA^JUS^XZ', 'zpl_save_configuration', '^JUS', 3],
    ['^xa^jus^xz', 'zpl_save_configuration', '^JUS', 3],
    ['^XA^JUF^XZ', 'zpl_restore_defaults', '^JUF', 3],
    ['^XA^JUN^XZ', 'zpl_restore_defaults', '^JUN', 3],
    ['^XA^JUA^XZ', 'zpl_restore_defaults', '^JUA', 3],
    ['^XA^JUR^XZ', 'zpl_configuration_update', '^JUR', 3],
    ['^XA^J\r\nUS^XZ', 'zpl_save_configuration', '^JUS', 3],
    ['^XA^NSP,192.168.0.9,255.255.255.0,192.168.0.1^XZ', 'zpl_network_settings', '^NS', 3],
    ['^XA^ND3,P,10.0.0.9^XZ', 'zpl_network_settings', '^ND', 3],
    ['^XA^NN,,public,private^XZ', 'zpl_network_settings', '^NN', 3],
    ['^XA^KNZebra1,desk^XZ', 'zpl_network_settings', '^KN', 3],
    ['^XA^WSevil-essid,I,L,100^XZ', 'zpl_wireless_settings', '^WS', 3],
    ['^XA^WX09,secret^XZ', 'zpl_wireless_settings', '^WX', 3],
    ['^XA^WPsecret^XZ', 'zpl_wireless_settings', '^WP', 3],
    ['^XA^SC9600,8,N,1,X,N^XZ', 'zpl_serial_settings', '^SC', 3],
    ['^XA^KP1234^XZ', 'zpl_password', '^KP', 3],
    ['~JB', 'zpl_memory_initialize', '~JB', 0],
    ['^XA^JBE^XZ', 'zpl_memory_initialize', '^JB', 3],
    ['^XA^JIE:PROG.BAZ^XZ', 'zpl_zbi_program', '^JI', 3],
    ['^XA^DFE:AUTOEXEC.ZPL^FS^XZ', 'zpl_autoexec', '^DFE:AUTOEXEC.ZPL', 3],
    ['~DYE:CLIENT,A,NRD,1024,,ABCDEF', 'zpl_wireless_settings', '~DY NRD', 0],
  ])('refuses %j', (payload, reason, command, offset) => {
    expect(zpl(payload)).toEqual({ reason, command, offset })
  })

  it('follows ^CC: after ^CC+ the command +JUS is ^JUS, and ^JUS is plain text', () => {
    expect(zpl('^XA^CC+\r\n+JUS\r\n+XZ')).toEqual({
      reason: 'zpl_save_configuration',
      command: '+JUS',
      offset: 9,
    })
    expect(zpl('^XA^CC+^FDprice^JUS^FS+XZ')).toBeNull()
  })

  it('follows ~CC, ~CT and ^CD', () => {
    expect(zpl('~CC%%XA%NS,10.0.0.1%XZ')).toMatchObject({ reason: 'zpl_network_settings', command: '%NS' })
    expect(zpl('^XA^CT#^XZ#JB')).toMatchObject({ reason: 'zpl_memory_initialize', command: '#JB' })
    const data = text('~JB^JUS!!')
    const bytes = Buffer.concat([
      text(`^XA^CD;^FO0,0^GFB;${data.length};${data.length};1;`),
      data,
      text('^FS^XZ'),
    ])
    expect(findForbiddenCommand(bytes, 'zpl')).toBeNull()
  })

  it('tells ~WL (print network label) and ~WR (reset radio) from ^WL and ^WR', () => {
    expect(zpl('~WL')).toBeNull()
    expect(zpl('~WR')).toBeNull()
    expect(zpl('^XA^WLOFF^XZ')).toMatchObject({ reason: 'zpl_wireless_settings' })
  })

  it('passes RFID commands that share the ^W letter (^WT, ^WV, ^WF) and a plain ~JR reset', () => {
    expect(zpl('^XA^RS8^WT,,,,,HELLO^FS^WVE^XZ~JR')).toBeNull()
  })

  it.each([
    ['! U1 setvar "ip.addr" "10.0.0.9"\r\n^XA^XZ', 'sgd_setvar', 0],
    ['^XA^XZ\r\n! U1 do "device.reset" ""\r\n', 'sgd_do', 8],
    ['! u1 SETVAR "wlan.essid" "x"\r\n', 'sgd_setvar', 0],
    ['! U setvar "device.languages" "line_print"\r\n', 'sgd_setvar', 0],
    ['! U\r\nsetvar "ip.dhcp.enable" "off"\r\nEND\r\n', 'sgd_setvar', 5],
    ['{}{"ip.addr":"10.0.0.9"}', 'sgd_setvar', 0],
    ['^XA^XZ{} {"device.reset":""}', 'sgd_setvar', 6],
  ])('refuses embedded SGD %j', (payload, reason, offset) => {
    expect(zpl(payload)).toMatchObject({ reason, offset })
  })

  it('still reads ZPL inside text that looks like SGD (a field, compressed ^GFA data)', () => {
    expect(zpl('! U1 getvar "device.friendly_name" ^XA^JUS^XZ')).toMatchObject({
      reason: 'zpl_save_configuration',
    })
    expect(zpl('^XA^FO0,0^GFA,8,8,1,!U1,^JUS^XZ')).toMatchObject({ reason: 'zpl_save_configuration' })
    expect(zpl('^XA^FD{}{"a":null,"^XZ^XA^NS":null}^FS^XZ')).toMatchObject({ reason: 'zpl_network_settings' })
  })

  it('passes SGD getvar and JSON reads', () => {
    expect(zpl('! U1 getvar "device.friendly_name"\r\n^XA^XZ')).toBeNull()
    expect(zpl('! U1 getvar "device.do_something"\r\n')).toBeNull()
    expect(zpl('{}{"ip.addr":null,"device.friendly_name":null}^XA^XZ')).toBeNull()
    expect(zpl('^XA^FO10,10^FDHello! Use 50% off {today}^FS^XZ')).toBeNull()
  })
})
