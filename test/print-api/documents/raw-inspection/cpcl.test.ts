import { describe, expect, it } from 'vitest'
import { pcxLength } from '../../../../print-api/documents/raw-inspection/cpcl.ts'
import { findForbiddenCommand } from '../../../../print-api/documents/raw-inspection/index.ts'

const text = (value: string) => Buffer.from(value, 'latin1')
const cpcl = (bytes: Buffer | string) =>
  findForbiddenCommand(typeof bytes === 'string' ? text(bytes) : bytes, 'cpcl')

const LABEL = [
  '! 0 200 200 406 1',
  'PAGE-WIDTH 560',
  'GAP-SENSE',
  'SET-TOF 0',
  'CENTER',
  'TEXT 4 0 0 20 Hello ! U1 setvar "not" "a command"',
  'LEFT',
  'BARCODE 128 1 1 50 20 100 123456789',
  'BARCODE QR 20 180 M 2 U 6',
  'MA,https://example.com/t/1',
  'ENDQR',
  'LINE 0 300 560 300 2',
  'FORM',
  'PRINT',
  '',
].join('\r\n')

/** A one-plane PCX whose rows are `rows`, stored as literal bytes (each below 0xC0, so no RLE runs). */
function pcx(rows: Buffer[]): Buffer {
  const widthBytes = rows[0]?.length ?? 0
  const header = Buffer.alloc(128, 0)
  header[0] = 0x0a
  header[1] = 5
  header[2] = 1
  header[3] = 1
  header.writeUInt16LE(widthBytes * 8 - 1, 8)
  header.writeUInt16LE(rows.length - 1, 10)
  header[65] = 1
  header.writeUInt16LE(widthBytes, 66)
  return Buffer.concat([header, ...rows])
}

describe('CPCL inspection', () => {
  it('passes a normal label, including SET-TOF and a utilities session', () => {
    expect(cpcl(LABEL)).toBeNull()
    expect(cpcl('! UTILITIES\r\nSET-TOF 0\r\nSETFF 10 2\r\nPRINT\r\n')).toBeNull()
    expect(cpcl('! U1 getvar "device.friendly_name"\r\n')).toBeNull()
  })

  it('skips COMPRESSED-GRAPHICS data by width × height', () => {
    const data = text('\r\n! U1 setvar "ip.addr" "1.2.3.4"\r\n')
    const padded = Buffer.concat([data, Buffer.alloc((4 - (data.length % 4)) % 4, 0)])
    const bytes = Buffer.concat([
      text(`! 0 200 200 210 1\r\nCG 4 ${padded.length / 4} 10 10 `),
      padded,
      text('\r\nFORM\r\nPRINT\r\n'),
    ])
    expect(cpcl(bytes)).toBeNull()
  })

  it('skips an inline PCX by its own header and RLE data', () => {
    const trap = text('\r\n! U1 do "device.reset" ""\r\n')
    const image = pcx([trap, trap])
    expect(pcxLength(image, 0)).toBe(image.length)
    const runs = pcx([Buffer.alloc(4, 0)]).subarray(0, 128)
    expect(pcxLength(Buffer.concat([runs, Buffer.from([0xc4, 0x21]), text('rest')]), 0)).toBe(130)
    const bytes = Buffer.concat([
      text('! 0 200 200 210 1\r\nPCX 0 30\r\n'),
      image,
      text('\r\nFORM\r\nPRINT\r\n'),
    ])
    expect(cpcl(bytes)).toBeNull()
  })

  it.each([
    ['! U1 setvar "wlan.essid" "evil"\r\n', 'sgd_setvar', 0],
    ['! 0 200 200 210 1\r\nPRINT\r\n! U1 do "device.restore_defaults" "ip"\r\n', 'sgd_do', 26],
    ['! U\r\nsetvar "bluetooth.discoverable" "on"\r\nEND\r\n', 'sgd_setvar', 5],
    ['! UTILITIES\r\nSET-TOF 0\r\ndo "device.reset" ""\r\nPRINT\r\n', 'sgd_do', 24],
    ['{}{"ip.dhcp.enable":"off"}\r\n', 'sgd_setvar', 0],
  ])('refuses %j', (payload, reason, offset) => {
    expect(cpcl(payload)).toMatchObject({ reason, offset })
  })
})
