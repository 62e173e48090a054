export { type DiscoveredPrinter, type DiscoveryDeps, discoverPrinters } from './discover-printers.ts'
export { decodeDeviceIdReply, languageOfDeviceId, parseDeviceId, readDeviceId } from './ieee1284-device-id.ts'
export { type DiscoveryLogger, findUsbPrinters } from './usb-printers.ts'
export { listUsblpDevices, readUsblpSysfs, type UsblpDeviceInfo } from './usblp-devices.ts'
