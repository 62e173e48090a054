import { type Kysely, sql } from 'kysely'
import type { PageOf } from '../../protocol/pagination.ts'
import type { Database } from './schema.ts'

/** The tables listed newest first by their `seq` column. */
type PagedTable = { [T in keyof Database]: Database[T] extends { seq: unknown } ? T : never }[keyof Database]

/**
 * A list that a cursor pages through: `id` is the column a cursor names a row by, and `scope` the columns
 * (`null`: is null) that hold for every row the list may show.
 */
export interface PagedList<T extends PagedTable> {
  table: T
  id: keyof Database[T] & string
  scope: Partial<Record<keyof Database[T] & string, string | null>>
}

export interface Paging<T extends PagedTable, Row, Item> {
  list: PagedList<T>
  /** The id of the last item of the page before; undefined for the first page. */
  cursor: string | undefined
  limit: number
  /** At most `limit + 1` rows of the list whose `seq` is below `beforeSeq`, newest first. */
  fetch: (beforeSeq: number) => Promise<Row[]>
  map: (row: Row) => Item
  idOf: (item: Item) => string
}

/**
 * Keyset pagination over the `seq` column, newest first: fetch one row more than `limit` to know whether a
 * next page exists. Undefined when the cursor names no row of the list.
 */
export async function pageAfter<T extends PagedTable, Row, Item>(
  db: Kysely<Database>,
  paging: Paging<T, Row, Item>,
): Promise<PageOf<Item> | undefined> {
  const beforeSeq =
    paging.cursor === undefined ? Number.MAX_SAFE_INTEGER : await seqOf(db, paging.list, paging.cursor)
  if (beforeSeq === undefined) return undefined
  const rows = await paging.fetch(beforeSeq)
  const data = rows.slice(0, paging.limit).map(paging.map)
  const last = data.at(-1)
  return { data, next_cursor: rows.length > paging.limit && last ? paging.idOf(last) : null }
}

async function seqOf<T extends PagedTable>(
  db: Kysely<Database>,
  list: PagedList<T>,
  cursor: string,
): Promise<number | undefined> {
  let query = db
    .selectFrom(list.table as PagedTable)
    .select('seq')
    .where(sql.ref(list.id), '=', cursor)
  for (const [column, value] of Object.entries(list.scope)) {
    query =
      value === null ? query.where(sql.ref(column), 'is', null) : query.where(sql.ref(column), '=', value)
  }
  return (await query.executeTakeFirst())?.seq
}
