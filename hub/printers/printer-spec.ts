import type { RawLanguage } from '../../protocol/enums.ts'
import type { PrinterCapabilities } from '../../protocol/printer.ts'

export type TransportSpec =
  | { kind: 'socket'; host: string; port: number }
  | {
      kind: 'serial'
      path: string
      baudRate: number
      dataBits: 5 | 6 | 7 | 8
      stopBits: 1 | 1.5 | 2
      parity: 'none' | 'even' | 'odd' | 'mark' | 'space'
      flowControl: 'none' | 'rtscts' | 'xonxoff'
    }
  | { kind: 'usblp'; path: string }
  | { kind: 'usb'; vendorId: number; productId: number; serialNumber: string | null }

/**
 * One printer the hub drives: how to reach it, what it speaks and what it can take. `key` identifies the
 * printer itself (its URI, or USB vendor:product:serial) and is what the stable `printer_id` derives from.
 */
export interface PrinterSpec {
  key: string
  name: string
  language: RawLanguage
  transport: TransportSpec
  capabilities: PrinterCapabilities
  /** Dots its head prints across (docs/pdf-printing.md, "Printable width"). */
  headDots: number
}
