import { sql as raw } from 'kysely'
import { valueByKey } from './batch-sql.ts'
import { batchedOn, padded } from './batched.ts'
import type { Sql } from './engine.ts'
import { type SlotOf, statementTemplates } from './statement-templates.ts'

interface KeptPayload {
  eventId: string
  payload: string
}

/** Events per statement at most: two parameters each, far under either engine's bound. */
const MAX_BATCH = 128

/**
 * WebhookRepository.keepPayload, with the bodies rendered together kept together (batched.ts): one UPDATE
 * writes each event's body where none is kept yet (COALESCE: the first body written stays) and returns
 * whichever stayed. The same event twice in a batch runs in a further round, and gets the body the first kept.
 */
export function payloadKeeper(sql: Sql): (eventId: string, payload: string) => Promise<string> {
  const update = keepStatement(sql)
  const keep = batchedOn(sql, (items: readonly KeptPayload[]) => keepTogether(sql, update, items), {
    maxBatch: MAX_BATCH,
    key: (item) => item.eventId,
  })
  return (eventId, payload) => keep({ eventId, payload })
}

/** The UPDATE of a padded batch (batched.ts), as a template per number of events (statement-templates.ts). */
function keepStatement({ db }: Sql) {
  return statementTemplates((rows: readonly KeptPayload[], slot: SlotOf<readonly KeptPayload[]>) => {
    const eventOf = (i: number) => slot((all) => all[i]?.eventId ?? '')
    return db
      .updateTable('webhook_events')
      .set((eb) => ({
        payload: eb.fn.coalesce(
          'payload',
          raw<string>`CAST(${valueByKey(
            'webhook_events.event_id',
            rows.map((_, i) => [eventOf(i), slot((all) => all[i]?.payload ?? '')] as const),
          )} AS TEXT)`,
        ),
      }))
      .where(
        'event_id',
        'in',
        rows.map((_, i) => eventOf(i)),
      )
      .returning(['event_id', 'payload'])
  })
}

async function keepTogether(
  sql: Sql,
  update: ReturnType<typeof keepStatement>,
  items: readonly KeptPayload[],
): Promise<string[]> {
  const rows = padded(items)
  const { rows: kept } = await update(sql.db, `${rows.length}`, rows)
  const byEvent = new Map(kept.map((row) => [row.event_id, row.payload]))
  return items.map((item) => byEvent.get(item.eventId) ?? item.payload)
}
