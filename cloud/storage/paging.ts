import type { PageOf } from '../../protocol/pagination.ts'

/**
 * Keyset pagination over the `seq` column, newest first: fetch one row more than `limit` to know whether a
 * next page exists. `beforeSeq` undefined means the cursor named no row of this account.
 */
export async function pageAfter<Row, Item>(
  beforeSeq: number | undefined,
  fetch: (beforeSeq: number) => Promise<Row[]>,
  limit: number,
  map: (row: Row) => Item,
  idOf: (item: Item) => string,
): Promise<PageOf<Item> | undefined> {
  if (beforeSeq === undefined) return undefined
  const rows = await fetch(beforeSeq)
  const data = rows.slice(0, limit).map(map)
  const last = data.at(-1)
  return { data, next_cursor: rows.length > limit && last ? idOf(last) : null }
}
