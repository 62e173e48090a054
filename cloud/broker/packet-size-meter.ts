/** What `PacketSizeMeter.measure` reports about a packet it will not let through. */
export type OversizePacket = { bytes: number } | { malformed: true }

/**
 * Follows MQTT packet boundaries in a byte stream by reading only each fixed header (MQTT 3.1.1 §2.2: one
 * byte of type and flags, then the Remaining Length in at most four bytes, §2.2.3) and skipping the rest by
 * count. It holds no bytes, so a packet is judged by the size it announces before its body arrives.
 * `maxBytes` is asked at each header, so the limit can change as the connection goes on.
 */
export class PacketSizeMeter {
  readonly #maxBytes: () => number
  /** Bytes of the current packet's body still to skip; 0 while reading a fixed header. */
  #bodyLeft = 0
  /** Bytes of the fixed header read so far (0: the type byte comes next). */
  #headerBytes = 0
  #remainingLength = 0

  constructor(maxBytes: () => number) {
    this.#maxBytes = maxBytes
  }

  /** Takes the next chunk of the stream; says so when a packet in it is over the limit or malformed. */
  measure(chunk: Uint8Array): OversizePacket | undefined {
    let at = 0
    while (at < chunk.length) {
      if (this.#bodyLeft > 0) {
        const skipped = Math.min(this.#bodyLeft, chunk.length - at)
        this.#bodyLeft -= skipped
        at += skipped
        continue
      }
      const byte = chunk[at++] as number
      if (this.#headerBytes === 0) {
        this.#headerBytes = 1
        this.#remainingLength = 0
        continue
      }
      this.#remainingLength += (byte & 0x7f) * 128 ** (this.#headerBytes - 1)
      this.#headerBytes += 1
      if (byte & 0x80) {
        if (this.#headerBytes === 5) return { malformed: true }
        continue
      }
      const bytes = this.#headerBytes + this.#remainingLength
      if (bytes > this.#maxBytes()) return { bytes }
      this.#bodyLeft = this.#remainingLength
      this.#headerBytes = 0
    }
    return undefined
  }
}
