import { existsSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { listUsblpDevices, readUsblpSysfs } from '../../../hub/discovery/usblp-devices.ts'
import { tempDir } from '../../helpers/temp-dir.ts'

describe('usblp devices', () => {
  const dirs: { path: string; remove(): void }[] = []
  const dir = () => {
    const d = tempDir()
    dirs.push(d)
    return d.path
  }
  afterEach(() => {
    for (const d of dirs.splice(0)) d.remove()
  })

  it('lists lpN devices in number order, and none without /dev/usb', async () => {
    const dev = dir()
    for (const name of ['lp10', 'lp2', 'lp0', 'hiddev0', 'lpx']) writeFileSync(path.join(dev, name), '')
    expect(await listUsblpDevices(dev)).toEqual(['lp0', 'lp2', 'lp10'].map((n) => path.join(dev, n)))
    expect(await listUsblpDevices(path.join(dev, 'missing'))).toEqual([])
    if (!existsSync('/dev/usb')) expect(await listUsblpDevices()).toEqual([])
  })

  it('reads the Device ID and USB identity from sysfs', async () => {
    const sysfs = dir()
    // /sys/devices/…/1-1.2 (USB device) / 1-1.2:1.0 (interface, with usblp's ieee1284_id)
    const device = path.join(sysfs, 'devices', 'platform', 'usb1', '1-1.2')
    const iface = path.join(device, '1-1.2:1.0')
    mkdirSync(iface, { recursive: true })
    writeFileSync(path.join(iface, 'ieee1284_id'), 'MFG:Zebra;CMD:ZPL;MDL:ZD420;\n')
    writeFileSync(path.join(device, 'idVendor'), '0a5f\n')
    writeFileSync(path.join(device, 'idProduct'), '0120\n')
    writeFileSync(path.join(device, 'serial'), 'D2J123456\n')
    mkdirSync(path.join(sysfs, 'class', 'usbmisc', 'lp0'), { recursive: true })
    symlinkSync(iface, path.join(sysfs, 'class', 'usbmisc', 'lp0', 'device'))

    expect(await readUsblpSysfs('/dev/usb/lp0', sysfs)).toEqual({
      deviceId: 'MFG:Zebra;CMD:ZPL;MDL:ZD420;',
      usb: { vendorId: 0x0a5f, productId: 0x0120, serialNumber: 'D2J123456', location: '1-1.2' },
    })
    expect(await readUsblpSysfs('/dev/usb/lp1', sysfs)).toBeNull()
    if (!existsSync('/sys/class/usbmisc/lp0')) expect(await readUsblpSysfs('/dev/usb/lp0')).toBeNull()
  })
})
