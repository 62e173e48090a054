import { describe, expect, it } from 'vitest'
import { pairingSlip } from '../../../hub/pairing/code-slip.ts'

describe('the pairing code slip', () => {
  it('is exact ESC/POS: reset, centred title, the code at double size, hint, feed and cut', () => {
    expect(pairingSlip('escpos', 'BCDF-GHJK').toString('latin1')).toBe(
      '\x1b@\x1ba\x01Printer hub pairing code\n\n\x1d!\x11BCDF-GHJK\n\x1d!\x00\nType it on the onboarding page.\n\n\n\x1dVB\x00',
    )
  })

  it('is one exact label in ZPL, TSPL and CPCL', () => {
    expect(pairingSlip('zpl', 'BCDF-GHJK').toString('latin1')).toBe(
      '^XA^FO30,30^A0N,30,30^FDPrinter hub pairing code^FS^FO30,80^A0N,70,70^FDBCDF-GHJK^FS^FO30,170^A0N,25,25^FDType it on the onboarding page.^FS^XZ\n',
    )
    expect(pairingSlip('tspl', 'BCDF-GHJK').toString('latin1')).toBe(
      'CLS\r\nTEXT 30,30,"3",0,1,1,"Printer hub pairing code"\r\nTEXT 30,80,"4",0,2,2,"BCDF-GHJK"\r\nTEXT 30,170,"2",0,1,1,"Type it on the onboarding page."\r\nPRINT 1\r\n',
    )
    expect(pairingSlip('cpcl', 'BCDF-GHJK').toString('latin1')).toBe(
      '! 0 200 200 260 1\r\nTEXT 4 0 30 30 Printer hub pairing code\r\nTEXT 4 1 30 90 BCDF-GHJK\r\nTEXT 7 0 30 200 Type it on the onboarding page.\r\nPRINT\r\n',
    )
  })
})
