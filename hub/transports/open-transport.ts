import type { TransportSpec } from '../printers/printer-spec.ts'
import { SerialTransport, type SerialTransportOptions } from './serial.ts'
import { SocketTransport, type SocketTransportOptions } from './socket.ts'
import type { Transport } from './transport.ts'
import { TransportError } from './transport.ts'
import { UsbTransport } from './usb.ts'
import type { UsbBinding } from './usb-binding.ts'
import { UsblpTransport } from './usblp.ts'

export interface TransportDeps {
  /** libusb access for `usb` printers; default: node-usb, loaded on first open. */
  usbBinding?: UsbBinding
  socket?: SocketTransportOptions
  serial?: SerialTransportOptions
}

/**
 * node-usb is a native addon: load it only when a `usb://` printer is opened, so that a hub without USB
 * printers (or where the addon cannot load) still runs.
 */
function lazyLibusb(): UsbBinding {
  let loaded: Promise<UsbBinding> | null = null
  const load = () => {
    loaded ??= import('./usb-binding-libusb.ts').then((m) => m.libusbBinding())
    return loaded
  }
  return {
    listDevices: async (filter) => (await load()).listDevices(filter),
    open: async (location) => (await load()).open(location),
  }
}

/** The transport for a spec (not opened yet). */
export function createTransport(spec: TransportSpec, deps: TransportDeps = {}): Transport {
  switch (spec.kind) {
    case 'socket':
      return new SocketTransport(spec, deps.socket)
    case 'serial':
      return new SerialTransport(spec, deps.serial)
    case 'usblp':
      return new UsblpTransport(spec)
    case 'usb':
      return new UsbTransport(spec, deps.usbBinding ?? lazyLibusb())
    default:
      throw new TransportError('unreachable', `unknown transport kind ${(spec as { kind: string }).kind}`)
  }
}
