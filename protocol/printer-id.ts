import { createHash } from 'node:crypto'

/** RFC 4122 §4.3 name-based UUID (version 5, SHA-1): the same namespace and name always give the same id. */
export function uuidV5(namespace: string, name: string): string {
  const ns = Buffer.from(namespace.replaceAll('-', ''), 'hex')
  const hash = createHash('sha1').update(ns).update(name, 'utf8').digest()
  hash[6] = ((hash[6] ?? 0) & 0x0f) | 0x50
  hash[8] = ((hash[8] ?? 0) & 0x3f) | 0x80
  const hex = hash.subarray(0, 16).toString('hex')
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`
}

/** Namespace of printer ids: a printer's id derives from its hub and its key, so it survives every restart. */
const PRINTER_NAMESPACE = '3f1c2b7e-8d4a-5e6f-9a0b-1c2d3e4f5a6b'

export function printerIdFor(agentId: string, printerKey: string): string {
  return uuidV5(PRINTER_NAMESPACE, `${agentId}\n${printerKey}`)
}
