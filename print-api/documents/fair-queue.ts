/** Owners whose last service is remembered: enough for fairness, bounded however many accounts exist. */
const MAX_REMEMBERED = 1024

/**
 * Waiting work kept per owner (an account) and handed out fairly: each owner's items in arrival order, and
 * among owners the one served least recently goes first. One owner's flood therefore waits behind itself,
 * while another owner's single item is served at the next free slot.
 */
export class FairQueue<T> {
  private readonly waiting = new Map<string, T[]>()
  /**
   * When each owner was last served (a counter, not a time), least recent first; owners never served, or
   * forgotten beyond the newest MAX_REMEMBERED, count as 0.
   */
  private readonly lastServed = new Map<string, number>()
  private served = 0
  private count = 0

  get size(): number {
    return this.count
  }

  sizeOf(owner: string): number {
    return this.waiting.get(owner)?.length ?? 0
  }

  push(owner: string, item: T): void {
    const queue = this.waiting.get(owner)
    if (queue) queue.push(item)
    else this.waiting.set(owner, [item])
    this.count++
  }

  /** Records that `owner` was served without waiting (its work started at once). */
  markServed(owner: string): void {
    this.lastServed.delete(owner)
    this.lastServed.set(owner, ++this.served)
    if (this.lastServed.size > MAX_REMEMBERED) {
      const oldest = this.lastServed.keys().next().value
      if (oldest !== undefined) this.lastServed.delete(oldest)
    }
  }

  /** The next item: the oldest of the owner served least recently (ties: the owner that queued first). */
  shift(): T | undefined {
    let next: string | undefined
    let nextServed = Number.POSITIVE_INFINITY
    for (const owner of this.waiting.keys()) {
      const served = this.lastServed.get(owner) ?? 0
      if (served < nextServed) {
        next = owner
        nextServed = served
      }
    }
    if (next === undefined) return undefined
    const queue = this.waiting.get(next) as T[]
    const item = queue.shift() as T
    if (queue.length === 0) this.waiting.delete(next)
    this.count--
    this.markServed(next)
    return item
  }

  /** Removes and returns everything waiting. */
  drain(): T[] {
    const all = [...this.waiting.values()].flat()
    this.waiting.clear()
    this.count = 0
    return all
  }
}
