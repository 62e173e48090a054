import { describe, expect, it } from 'vitest'
import { FairQueue } from '../../../print-api/documents/fair-queue.ts'

function drainInOrder(queue: FairQueue<string>): string[] {
  const order: string[] = []
  for (let item = queue.shift(); item !== undefined; item = queue.shift()) order.push(item)
  return order
}

describe('FairQueue', () => {
  it("keeps each owner's items in arrival order and serves owners least recently served first", () => {
    const queue = new FairQueue<string>()
    for (const item of ['a1', 'a2', 'a3']) queue.push('a', item)
    queue.push('b', 'b1')
    queue.push('c', 'c1')
    queue.push('c', 'c2')
    expect([queue.size, queue.sizeOf('a'), queue.sizeOf('b'), queue.sizeOf('z')]).toEqual([6, 3, 1, 0])
    expect(drainInOrder(queue)).toEqual(['a1', 'b1', 'c1', 'a2', 'c2', 'a3'])
    expect(queue.size).toBe(0)
  })

  it('puts an owner whose work started without waiting behind owners that have not been served', () => {
    const queue = new FairQueue<string>()
    queue.markServed('a')
    queue.push('a', 'a2')
    queue.push('b', 'b1')
    expect(drainInOrder(queue)).toEqual(['b1', 'a2'])
  })

  it('drains everything waiting', () => {
    const queue = new FairQueue<string>()
    queue.push('a', 'a1')
    queue.push('b', 'b1')
    expect(queue.drain().sort()).toEqual(['a1', 'b1'])
    expect([queue.size, queue.shift()]).toEqual([0, undefined])
  })

  it('remembers a bounded number of owners (1024) however many are served', () => {
    const queue = new FairQueue<string>()
    queue.markServed('first')
    for (let i = 0; i < 1024; i++) queue.markServed(`owner-${i}`)
    // 'first' is forgotten, so it counts as never served and goes before a remembered owner.
    queue.push('owner-0', 'remembered')
    queue.push('first', 'forgotten')
    expect(drainInOrder(queue)).toEqual(['forgotten', 'remembered'])
  })
})
