import { isIPv6 } from 'node:net'
import type { TransportSpec } from '../printers/printer-spec.ts'

/** Four lowercase hex digits, as USB ids are written (`04b8`). */
export function usbIdHex(id: number): string {
  return id.toString(16).padStart(4, '0')
}

/** Percent-encodes what would end or confuse a URI path (`%`, `?`, `#`, spaces, anything not printable ASCII). */
export function encodeUriPath(path: string): string {
  return path.replace(/[%?#\s]|[^ -~]/gu, (c) =>
    [...Buffer.from(c)].map((b) => `%${b.toString(16).toUpperCase().padStart(2, '0')}`).join(''),
  )
}

/**
 * The transport part of a printer URI, without options (`socket://10.0.0.5:9100`, `serial:/dev/ttyUSB0`,
 * `usblp:/dev/usb/lp0`, `usb://04b8:0202/SERIAL`): used as a transport's `description` in logs.
 */
export function transportUri(spec: TransportSpec): string {
  switch (spec.kind) {
    case 'socket':
      return `socket://${isIPv6(spec.host) ? `[${spec.host}]` : spec.host}:${spec.port}`
    case 'serial':
    case 'usblp':
      return `${spec.kind}:${encodeUriPath(spec.path)}`
    case 'usb': {
      const serial = spec.serialNumber === null ? '' : `/${encodeURIComponent(spec.serialNumber)}`
      return `usb://${usbIdHex(spec.vendorId)}:${usbIdHex(spec.productId)}${serial}`
    }
  }
}
