import DataLoader from 'dataloader'
import type { Compilable } from 'kysely'
import type { Sql } from './engine.ts'
import { type SlotOf, slotsOf, statementTemplates } from './statement-templates.ts'

export interface BatchOptions<T> {
  /** Most items in one batch (a statement's parameters are bounded: 32,766 on SQLite, 65,535 on PostgreSQL). */
  maxBatch: number
  /** Batches running at once; what is asked meanwhile waits and gathers into the next one. */
  maxInFlight?: number
  /**
   * Items with the same key never run in one batch (one UPDATE cannot change a row twice): a later one runs
   * in a further round of the same batch, after the earlier one, so that each key's items apply in order.
   */
  key?: (item: T) => string
  /**
   * For work nobody waits on (hubs' reports): a batch waits up to `ms` for more items before it runs, or until
   * it holds `items`, so that items asked a few milliseconds apart share a statement.
   */
  linger?: { ms: number; items: number }
}

/**
 * Work that callers ask for one item at a time, done many items at a time (one statement or transaction for
 * many, where each on its own costs a round trip to the database and, on SQLite, a commit): an item asked
 * while a batch of its kind waits for its turn joins that batch. A batch's turn comes at the end of the event
 * loop's current round (setImmediate; or after `linger`), or, while `maxInFlight` batches of its kind run,
 * when one of them ends; so an item alone waits one turn of the loop, and under load batches grow with the
 * load.
 *
 * `run` answers each item in order and must be atomic (one statement, or one transaction), or write only what
 * is the same written twice: when it fails, each item of the batch runs again alone, so that one bad item (a
 * job whose document was purged meanwhile) fails only its own caller.
 */
export function batched<T, R>(
  run: (items: readonly T[]) => Promise<R[]>,
  options: BatchOptions<T>,
): (item: T) => Promise<R> {
  const maxInFlight = options.maxInFlight ?? 1
  let inFlight = 0
  const waiting: (() => void)[] = []
  const whenFree = (dispatch: () => void) => {
    if (inFlight < maxInFlight) dispatch()
    else waiting.push(dispatch)
  }
  /** The batch waiting for its turn while it lingers: how to start it early, and how many items it holds. */
  let gathering: { start: () => void; items: number } | undefined
  const schedule = (dispatch: () => void) => {
    const { linger } = options
    if (!linger) {
      setImmediate(() => whenFree(dispatch))
      return
    }
    let started = false
    const start = () => {
      if (started) return
      started = true
      clearTimeout(timer)
      if (gathering?.start === start) gathering = undefined
      whenFree(dispatch)
    }
    const timer = setTimeout(start, linger.ms)
    gathering = { start, items: 0 }
  }
  const loader = new DataLoader<T, R>(
    async (items) => {
      inFlight += 1
      try {
        return await inRounds(items, options.key, run)
      } finally {
        inFlight -= 1
        waiting.shift()?.()
      }
    },
    { cache: false, maxBatchSize: options.maxBatch, batchScheduleFn: schedule },
  )
  return (item) => {
    const answer = loader.load(item)
    if (gathering && ++gathering.items >= (options.linger?.items ?? Number.POSITIVE_INFINITY))
      gathering.start()
    return answer
  }
}

/**
 * As batched, for a repository on `sql`: within a transaction (`sql` is one, Storage.atomically) nothing is
 * gathered, each item runs alone in it.
 */
export function batchedOn<T, R>(
  sql: Sql,
  run: (items: readonly T[]) => Promise<R[]>,
  options: BatchOptions<T>,
): (item: T) => Promise<R> {
  if (sql.db.isTransaction) return async (item) => answered([item], await run([item]))[0] as R
  return batched(run, options)
}

/** The items in rounds where no key repeats, each round after the one before; answers in the items' order. */
async function inRounds<T, R>(
  items: readonly T[],
  key: ((item: T) => string) | undefined,
  run: (items: readonly T[]) => Promise<R[]>,
): Promise<(R | Error)[]> {
  if (!key) return isolated(items, run)
  const answers: (R | Error)[] = new Array(items.length)
  let pending = items.map((item, index) => ({ item, index }))
  while (pending.length > 0) {
    const keys = new Set<string>()
    const round: typeof pending = []
    const later: typeof pending = []
    for (const entry of pending) {
      const k = key(entry.item)
      if (keys.has(k)) later.push(entry)
      else {
        keys.add(k)
        round.push(entry)
      }
    }
    const roundAnswers = await isolated(
      round.map((entry) => entry.item),
      run,
    )
    round.forEach((entry, i) => {
      answers[entry.index] = roundAnswers[i] as R | Error
    })
    pending = later
  }
  return answers
}

/** The batch, or, when it fails, each item alone: an item's error is its own answer. */
async function isolated<T, R>(
  items: readonly T[],
  run: (items: readonly T[]) => Promise<R[]>,
): Promise<(R | Error)[]> {
  try {
    return answered(items, await run(items))
  } catch (error) {
    if (items.length === 1) return [asError(error)]
  }
  const answers: (R | Error)[] = []
  for (const item of items) {
    try {
      answers.push(answered([item], await run([item]))[0] as R)
    } catch (error) {
      answers.push(asError(error))
    }
  }
  return answers
}

function answered<R>(items: readonly unknown[], answers: R[]): R[] {
  if (answers.length !== items.length)
    throw new Error(`a batch of ${items.length} was answered with ${answers.length}`)
  return answers
}

function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error))
}

/**
 * The items, the last one repeated up to the next power of two: a statement over a list of ids (`IN (…)`, a
 * `CASE` by id) then has one text per power of two instead of one per length, and each text is prepared once
 * per connection (postgres-prepared.ts). Only for statements where a repeated item changes nothing.
 */
export function padded<T>(items: readonly T[]): T[] {
  const last = items[items.length - 1]
  if (last === undefined) return []
  let size = 1
  while (size < items.length) size *= 2
  return [...items, ...Array.from({ length: size - items.length }, () => last)]
}

export interface LookupOptions<K, Row> {
  /**
   * The query for the rows of these keys, in any order, at most one a key (the keys may repeat: padded). It is
   * built once per number of keys, with the keys as slots (statement-templates.ts): it must use them only as
   * values of the statement.
   */
  select(keys: readonly K[]): Compilable<Row>
  /** A row's key, as keyText names it. */
  keyOfRow(row: Row): string
  /** A key as text (for keys that are not strings, such as a hash). */
  keyText?(key: K): string
}

/** Lookups per statement at most. */
const MAX_LOOKUPS = 256

/**
 * Lookups by key asked together, as one query (`WHERE key IN (…)`, the keys padded): each caller gets its
 * key's row, or undefined.
 */
export function batchedLookup<K, Row>(
  sql: Sql,
  options: LookupOptions<K, Row>,
): (key: K) => Promise<Row | undefined> {
  const text = options.keyText ?? String
  const fetch = keysTemplate(sql, options)
  return batchedOn(
    sql,
    async (keys: readonly K[]) => {
      const distinct = new Map(keys.map((key) => [text(key), key]))
      const rows = await fetch(padded([...distinct.values()]))
      const byKey = new Map(rows.map((row) => [options.keyOfRow(row), row]))
      return keys.map((key) => byKey.get(text(key)))
    },
    { maxBatch: MAX_LOOKUPS },
  )
}

/**
 * The rows in pieces whose sizes are powers of two, largest first: an INSERT of n rows has one text per
 * size, and each text is prepared once per connection (postgres-prepared.ts).
 */
export function powersOfTwo<T>(rows: readonly T[]): T[][] {
  const pieces: T[][] = []
  let start = 0
  while (start < rows.length) {
    let size = 1
    while (size * 2 <= rows.length - start) size *= 2
    pieces.push(rows.slice(start, start + size))
    start += size
  }
  return pieces
}

/**
 * The items in order, cut into groups whose weights add up to at most `max` (an item heavier than that is a
 * group alone): for a batch whose items each bring many rows to one statement, whose parameters are bounded.
 */
export function groupsOfWeight<T>(items: readonly T[], weight: (item: T) => number, max: number): T[][] {
  const groups: T[][] = []
  let group: T[] = []
  let total = 0
  for (const item of items) {
    const w = weight(item)
    if (group.length > 0 && total + w > max) {
      groups.push(group)
      group = []
      total = 0
    }
    group.push(item)
    total += w
  }
  if (group.length > 0) groups.push(group)
  return groups
}

/**
 * Lookups by key asked together, as one query, where a key names any number of rows: each caller gets its
 * key's rows, in the order the query gave them.
 */
export function batchedLookupAll<Row>(
  sql: Sql,
  options: Omit<LookupOptions<string, Row>, 'keyText'>,
): (key: string) => Promise<Row[]> {
  const fetch = keysTemplate(sql, options)
  return batchedOn(
    sql,
    async (keys: readonly string[]) => {
      const rows = await fetch(padded([...new Set(keys)]))
      const byKey = new Map<string, Row[]>()
      for (const row of rows) {
        const key = options.keyOfRow(row)
        const list = byKey.get(key)
        if (list) list.push(row)
        else byKey.set(key, [row])
      }
      return keys.map((key) => byKey.get(key) ?? [])
    },
    { maxBatch: MAX_LOOKUPS },
  )
}

/** The rows of these keys, by a template per number of keys (LookupOptions.select). */
function keysTemplate<K, Row>(sql: Sql, options: Pick<LookupOptions<K, Row>, 'select'>) {
  const run = statementTemplates((keys: readonly K[], slot: SlotOf<readonly K[]>) =>
    options.select(slotsOf(slot, keys, (all) => all)),
  )
  return async (keys: readonly K[]): Promise<Row[]> => (await run(sql.db, `${keys.length}`, keys)).rows
}
