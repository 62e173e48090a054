import { existsSync } from 'node:fs'
import { afterEach, describe, expect, it } from 'vitest'
import { createTransport } from '../../../hub/transports/open-transport.ts'
import { TransportError } from '../../../hub/transports/transport.ts'
import { printerInterfaceOf, UsbTransport } from '../../../hub/transports/usb.ts'
import { UsbError } from '../../../hub/transports/usb-binding.ts'
import { FakeUsbBinding } from './fake-usb-binding.ts'
import { transportContract } from './transport-contract.ts'

const EPSON = { kind: 'usb', vendorId: 0x04b8, productId: 0x0202, serialNumber: 'FAKE0001' } as const

transportContract('usb (fake libusb binding)', {
  async start() {
    const binding = new FakeUsbBinding()
    const printer = binding.add()
    return {
      transport: new UsbTransport(EPSON, binding),
      peer: {
        waitForBytes: (count) => printer.received.waitFor(count),
        send: async (bytes) => printer.reply(bytes),
        goAway: async () => printer.unplug(),
      },
      stop: async () => {},
      openHandles: () => binding.openHandles,
    }
  },
  unreachable: () => new UsbTransport(EPSON, new FakeUsbBinding()),
})

describe('usb transport', () => {
  let binding = new FakeUsbBinding()
  afterEach(() => {
    expect(binding.openHandles).toBe(0)
    binding = new FakeUsbBinding()
  })

  it('claims the printer-class interface among others and detaches the kernel driver', async () => {
    const hid = {
      interfaceNumber: 0,
      alternateSetting: 0,
      interfaceClass: 3,
      interfaceSubclass: 0,
      interfaceProtocol: 0,
      endpoints: [
        { address: 0x83, direction: 'in' as const, transferType: 'interrupt' as const, maxPacketSize: 8 },
      ],
    }
    const printer = binding.add({ otherInterfaces: [hid] })
    expect(printerInterfaceOf(printer.info)).toEqual({
      interfaceNumber: 1,
      alternateSetting: 0,
      bulkOut: 0x01,
      bulkIn: 0x82,
      bulkInPacketSize: 64,
    })
    const transport = createTransport(EPSON, { usbBinding: binding })
    await transport.open()
    expect(printer.claimed).toBe(true)
    expect(printer.kernelDriverDetached).toBe(true)
    await transport.close()
    expect(printer.claimed).toBe(false)
  })

  it('finds the device by serial number when several of one model are attached', async () => {
    const first = binding.add({ serialNumber: 'AAA', location: '1-1' })
    const second = binding.add({ serialNumber: 'BBB', location: '1-2' })
    const transport = new UsbTransport({ ...EPSON, serialNumber: 'BBB' }, binding)
    await transport.open()
    await transport.write(Buffer.from('to B'))
    await transport.close()
    expect(second.received.bytes().toString()).toBe('to B')
    expect(first.received.length).toBe(0)
  })

  it('takes any device of the model when the URI names no serial number', async () => {
    const printer = binding.add({ serialNumber: null })
    const transport = new UsbTransport({ ...EPSON, serialNumber: null }, binding)
    await transport.open()
    await transport.write(Buffer.from('x'))
    await transport.close()
    expect(printer.received.length).toBe(1)
  })

  it('answers null to a query on a unidirectional printer without sending the request', async () => {
    const printer = binding.add({ bidirectional: false })
    const transport = new UsbTransport(EPSON, binding)
    await transport.open()
    expect(
      await transport.query(Buffer.from([0x10, 0x04, 0x01]), { timeoutMs: 1000, isComplete: () => true }),
    ).toBeNull()
    await transport.close()
    expect(printer.received.length).toBe(0)
  })

  it('drops IN bytes the printer sent before a query (e.g. ESC/POS automatic status back)', async () => {
    const printer = binding.add({
      responder: (out, p) => {
        if (out.equals(Buffer.from([0x10, 0x04, 0x01]))) p.reply(Buffer.from([0x16]))
      },
    })
    const transport = new UsbTransport(EPSON, binding)
    await transport.open()
    printer.reply(Buffer.from([0x14, 0x00, 0x00, 0x0f]))
    const reply = await transport.query(Buffer.from([0x10, 0x04, 0x01]), {
      timeoutMs: 1000,
      isComplete: (r) => r.length >= 1,
    })
    await transport.close()
    expect(reply).toEqual(Buffer.from([0x16]))
  })

  it('rejects a query with disconnected when the printer is unplugged while waiting', async () => {
    const printer = binding.add()
    const transport = new UsbTransport(EPSON, binding)
    await transport.open()
    const query = transport.query(Buffer.from('~HS'), { timeoutMs: 10_000, isComplete: () => false })
    await printer.received.waitFor(3)
    printer.unplug()
    const failure = await query.catch((e: unknown) => e)
    expect(failure).toBeInstanceOf(TransportError)
    expect((failure as TransportError).kind).toBe('disconnected')
    await transport.close()
  })

  it("maps a claimed interface to 'busy' and a permission error to 'unreachable' with a hint", async () => {
    binding.add()
    const holder = new UsbTransport(EPSON, binding)
    await holder.open()
    const second = new UsbTransport(EPSON, binding)
    expect(await second.open().catch((e: TransportError) => e.kind)).toBe('busy')
    await holder.close()

    const denied = new FakeUsbBinding()
    denied.add()
    denied.open = async () => {
      throw new UsbError('access', 'LIBUSB_ERROR_ACCESS')
    }
    const failure = await new UsbTransport(EPSON, denied).open().catch((e: TransportError) => e)
    expect(failure).toMatchObject({ kind: 'unreachable', message: expect.stringContaining('udev') })
  })

  it('loads node-usb lazily: without a bus, a usb:// printer is unreachable, not a crash', async () => {
    const transport = createTransport(EPSON)
    const failure = await transport.open().catch((e: unknown) => e)
    expect(failure).toBeInstanceOf(TransportError)
    expect((failure as TransportError).kind).toBe('unreachable')
    await transport.close()
  })

  it('has a node-usb binding that lists no devices on a host without a bus and refuses unknown ones', async () => {
    const { libusbBinding } = await import('../../../hub/transports/usb-binding-libusb.ts')
    const real = libusbBinding()
    const devices = await real.listDevices({ interfaceClass: 7 })
    expect(Array.isArray(devices)).toBe(true)
    if (!existsSync('/dev/bus/usb')) expect(devices).toEqual([])
    await expect(real.open('99-9.9')).rejects.toMatchObject({ name: 'UsbError', code: 'no_device' })
  })
})
