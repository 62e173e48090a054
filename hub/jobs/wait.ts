/** A sleep that `wake()` ends early (new work, a cancel, or stopping). */
export class Waiter {
  #wake: (() => void) | undefined

  sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms)
      const self = this
      function done() {
        clearTimeout(timer)
        if (self.#wake === done) self.#wake = undefined
        resolve()
      }
      this.#wake = done
    })
  }

  wake(): void {
    this.#wake?.()
  }
}
