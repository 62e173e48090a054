/**
 * Runs a transport's operations one at a time, in call order, so that the bytes of two writes (or of a
 * write and a status request) never interleave on the wire even when a caller does not await.
 */
export class OperationQueue {
  #tail: Promise<unknown> = Promise.resolve()

  run<T>(operation: () => Promise<T>): Promise<T> {
    const result = this.#tail.then(operation, operation)
    this.#tail = result.catch(() => undefined)
    return result
  }

  /** Resolves once every operation queued so far has settled. */
  async idle(): Promise<void> {
    await this.#tail
  }
}

/** A promise that resolves after `ms` milliseconds (used for polling; never for assertions). */
export function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms))
}
