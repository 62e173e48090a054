/**
 * Exponential backoff with full jitter (a random delay up to the exponential cap), so that thousands of hubs
 * losing the broker at once do not come back at once (STACK-NOTES: reconnect storms).
 */
export class Backoff {
  #attempt = 0

  constructor(
    private readonly minMs = 500,
    private readonly maxMs = 30_000,
    private readonly random: () => number = Math.random,
  ) {}

  next(): number {
    const cap = Math.min(this.maxMs, this.minMs * 2 ** this.#attempt)
    this.#attempt = Math.min(this.#attempt + 1, 30)
    return Math.round(this.minMs / 2 + this.random() * (cap - this.minMs / 2))
  }

  reset(): void {
    this.#attempt = 0
  }
}
