/** Raw MQTT packets for probing brokers below the client library. */
/** MQTT 3.1.1 §2.2.3: the Remaining Length as a variable byte integer. */
export function remainingLength(length: number): Buffer {
  const bytes: number[] = []
  do {
    let byte = length % 128
    length = Math.floor(length / 128)
    if (length > 0) byte |= 0x80
    bytes.push(byte)
  } while (length > 0)
  return Buffer.from(bytes)
}

/** The start of a CONNECT (MQTT 3.1.1 §3.1) that announces `length` bytes after its fixed header. */
export function connectHeader(length: number): Buffer {
  const variableHeader = Buffer.from([0, 4, ...Buffer.from('MQTT'), 4, 0x02, 0, 30])
  return Buffer.concat([Buffer.from([0x10]), remainingLength(length), variableHeader])
}
