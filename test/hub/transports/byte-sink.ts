/** Collects bytes a simulated printer receives and lets a test wait until enough have arrived. */
export class ByteSink {
  #chunks: Buffer[] = []
  #length = 0
  #waiters: { count: number; resolve: () => void }[] = []

  push(chunk: Buffer): void {
    this.#chunks.push(Buffer.from(chunk))
    this.#length += chunk.length
    this.#waiters = this.#waiters.filter((w) => {
      if (this.#length < w.count) return true
      w.resolve()
      return false
    })
  }

  get length(): number {
    return this.#length
  }

  bytes(): Buffer {
    return Buffer.concat(this.#chunks)
  }

  /** Resolves with everything received once at least `count` bytes have arrived (the test times out otherwise). */
  async waitFor(count: number): Promise<Buffer> {
    if (this.#length < count) await new Promise<void>((resolve) => this.#waiters.push({ count, resolve }))
    return this.bytes()
  }
}
