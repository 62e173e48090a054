import { type RawBuilder, sql } from 'kysely'

/**
 * `CASE <column> WHEN key THEN value … END`: in one statement for the rows of many keys (a batch, batched.ts),
 * each row's own value, chosen by its key. The same text on both engines.
 */
export function valueByKey<V extends string | number | null>(
  column: string,
  entries: readonly (readonly [key: string, value: V])[],
): RawBuilder<V> {
  return sql<V>`CASE ${sql.ref(column)} ${sql.join(
    entries.map(([key, value]) => sql`WHEN ${key} THEN ${value}`),
    sql` `,
  )} END`
}
