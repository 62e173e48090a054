import { afterEach, describe, expect, it, vi } from 'vitest'
import { batched, groupsOfWeight } from '../../../cloud/storage/batched.ts'

/** A `run` that records each batch it was given and answers each item doubled, after `gate` (if any). */
function recorder(gate?: Promise<void>) {
  const batches: number[][] = []
  const run = async (items: readonly number[]) => {
    batches.push([...items])
    await gate
    return items.map((item) => item * 2)
  }
  return { batches, run }
}

/**
 * Resolves after the callbacks setImmediate holds now: a batch's turn (batched.ts) asked before this has come,
 * so what did not run by then did not run at its turn.
 */
const loopTurn = () => new Promise((resolve) => setImmediate(resolve))

function deferred() {
  let open = () => {}
  const promise = new Promise<void>((resolve) => {
    open = resolve
  })
  return { promise, open }
}

describe('batched work', () => {
  it('runs what is asked in one round of the event loop as one batch, answering each caller', async () => {
    const { batches, run } = recorder()
    const double = batched(run, { maxBatch: 100 })
    expect(await Promise.all([1, 2, 3].map(double))).toEqual([2, 4, 6])
    expect(batches).toEqual([[1, 2, 3]])
  })

  it('runs an item alone when nothing else is asked', async () => {
    const { batches, run } = recorder()
    const double = batched(run, { maxBatch: 100 })
    expect(await double(5)).toBe(10)
    expect(await double(6)).toBe(12)
    expect(batches).toEqual([[5], [6]])
  })

  it('gathers what is asked while a batch runs into the next one', async () => {
    const gate = deferred()
    const { batches, run } = recorder(gate.promise)
    const double = batched(run, { maxBatch: 100 })
    const first = double(1)
    await loopTurn()
    expect(batches).toEqual([[1]])
    const later = [double(2)]
    await loopTurn()
    later.push(double(3))
    await loopTurn()
    // Nothing more runs while the first batch does.
    expect(batches).toEqual([[1]])
    gate.open()
    expect(await Promise.all([first, ...later])).toEqual([2, 4, 6])
    expect(batches).toEqual([[1], [2, 3]])
  })

  it('runs as many batches at once as allowed', async () => {
    const gate = deferred()
    const { batches, run } = recorder(gate.promise)
    const double = batched(run, { maxBatch: 100, maxInFlight: 2 })
    const first = double(1)
    await loopTurn()
    const second = double(2)
    await loopTurn()
    const third = double(3)
    await loopTurn()
    expect(batches).toEqual([[1], [2]])
    gate.open()
    expect(await Promise.all([first, second, third])).toEqual([2, 4, 6])
    expect(batches).toEqual([[1], [2], [3]])
  })

  it('splits a batch at maxBatch', async () => {
    const { batches, run } = recorder()
    const double = batched(run, { maxBatch: 2 })
    expect(await Promise.all([1, 2, 3, 4, 5].map(double))).toEqual([2, 4, 6, 8, 10])
    expect(batches).toEqual([[1, 2], [3, 4], [5]])
  })

  it('runs each item alone when a batch fails, so that only the bad item’s caller fails', async () => {
    const batches: number[][] = []
    const double = batched(
      async (items: readonly number[]) => {
        batches.push([...items])
        if (items.includes(13)) throw new Error('unlucky')
        return items.map((item) => item * 2)
      },
      { maxBatch: 100 },
    )
    const answers = await Promise.allSettled([1, 13, 3].map(double))
    expect(answers).toEqual([
      { status: 'fulfilled', value: 2 },
      { status: 'rejected', reason: new Error('unlucky') },
      { status: 'fulfilled', value: 6 },
    ])
    expect(batches).toEqual([[1, 13, 3], [1], [13], [3]])
  })

  it('fails the caller when a batch answers with the wrong number of answers', async () => {
    const double = batched(async () => [1, 2, 3], { maxBatch: 100 })
    await expect(double(1)).rejects.toThrow('a batch of 1 was answered with 3')
  })

  it('never puts two items of one key in one batch, and runs them in the order asked', async () => {
    const batches: string[][] = []
    const tag = batched(
      async (items: readonly string[]) => {
        batches.push([...items])
        return items.map((item) => `${item}!`)
      },
      { maxBatch: 100, key: (item) => item.split(':')[0] as string },
    )
    const answers = await Promise.all(['a:1', 'b:1', 'a:2', 'c:1', 'a:3', 'b:2'].map(tag))
    expect(answers).toEqual(['a:1!', 'b:1!', 'a:2!', 'c:1!', 'a:3!', 'b:2!'])
    expect(batches).toEqual([['a:1', 'b:1', 'c:1'], ['a:2', 'b:2'], ['a:3']])
  })

  describe('with a linger, on a clock that moves only when told', () => {
    afterEach(() => {
      vi.useRealTimers()
    })

    it('lingers for items asked a little later, and starts at once when the batch holds enough', async () => {
      vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] })
      const { batches, run } = recorder()
      // Were the full batch not started at once, it would wait for a clock that no longer moves: a timeout.
      const double = batched(run, { maxBatch: 100, linger: { ms: 100, items: 3 } })
      const first = double(1)
      await vi.advanceTimersByTimeAsync(20)
      const second = double(2)
      await vi.advanceTimersByTimeAsync(20)
      expect(batches).toEqual([])
      expect(await Promise.all([first, second, double(3)])).toEqual([2, 4, 6])
      expect(batches).toEqual([[1, 2, 3]])
    })

    it('runs an item alone once the linger is over', async () => {
      vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] })
      const { batches, run } = recorder()
      const double = batched(run, { maxBatch: 100, linger: { ms: 100, items: 10 } })
      const lone = double(4)
      await vi.advanceTimersByTimeAsync(99)
      expect(batches).toEqual([])
      await vi.advanceTimersByTimeAsync(1)
      expect(await lone).toBe(8)
      expect(batches).toEqual([[4]])
    })
  })
})

describe('groupsOfWeight', () => {
  it('cuts the items, in order, into groups weighing at most the bound; a heavier item is a group alone', () => {
    const weight = (item: number) => item
    expect(groupsOfWeight([3, 4, 2, 9, 1, 5, 5, 12, 1], weight, 10)).toEqual([
      [3, 4, 2],
      [9, 1],
      [5, 5],
      [12],
      [1],
    ])
    expect(groupsOfWeight([0, 0, 10, 0], weight, 10)).toEqual([[0, 0, 10, 0]])
    expect(groupsOfWeight([], weight, 10)).toEqual([])
  })
})
