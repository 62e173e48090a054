import { sql as raw } from 'kysely'
import { valueByKey } from './batch-sql.ts'
import { batchedOn, padded } from './batched.ts'
import type { Sql } from './engine.ts'

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
  const keep = batchedOn(sql, (items: readonly KeptPayload[]) => keepTogether(sql, items), {
    maxBatch: MAX_BATCH,
    key: (item) => item.eventId,
  })
  return (eventId, payload) => keep({ eventId, payload })
}

async function keepTogether(sql: Sql, items: readonly KeptPayload[]): Promise<string[]> {
  const rows = padded(items)
  const kept = await sql.db
    .updateTable('webhook_events')
    .set((eb) => ({
      payload: eb.fn.coalesce(
        'payload',
        raw<string>`CAST(${valueByKey(
          'webhook_events.event_id',
          rows.map((item) => [item.eventId, item.payload] as const),
        )} AS TEXT)`,
      ),
    }))
    .where(
      'event_id',
      'in',
      rows.map((item) => item.eventId),
    )
    .returning(['event_id', 'payload'])
    .execute()
  const byEvent = new Map(kept.map((row) => [row.event_id, row.payload]))
  return items.map((item) => byEvent.get(item.eventId) ?? item.payload)
}
