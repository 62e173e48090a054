import { type RawBuilder, sql as raw } from 'kysely'
import type { WebhookAttempt } from '../../protocol/webhooks.ts'
import { valueByKey } from './batch-sql.ts'
import { batchedOn, padded } from './batched.ts'
import { inTransaction, type Sql } from './engine.ts'
import type { AttemptOutcome, ClaimedDelivery } from './webhooks.ts'

interface RecordedAttempt {
  claim: ClaimedDelivery
  attempt: WebhookAttempt
  outcome: AttemptOutcome
}

/** Attempts per transaction at most: a few parameters each, far under either engine's bound. */
const MAX_BATCH = 128

/**
 * WebhookRepository.recordAttempt, with the attempts that end together recorded together (batched.ts): one
 * transaction moves every delivery (one UPDATE, each row's values chosen by a `CASE` on its id, each only
 * while its lease is still the claim's) and inserts every attempt of the deliveries that moved (one INSERT).
 * An endpoint's health is written only where it changes: after a failure, or after a success of an endpoint
 * that was failing; those writes follow in the order the attempts were asked.
 */
export function attemptRecorder(
  sql: Sql,
): (claim: ClaimedDelivery, attempt: WebhookAttempt, outcome: AttemptOutcome) => Promise<void> {
  const record = batchedOn(sql, (items: readonly RecordedAttempt[]) => recordTogether(sql, items), {
    maxBatch: MAX_BATCH,
    key: (item) => item.claim.deliveryId,
  })
  return (claim, attempt, outcome) => record({ claim, attempt, outcome })
}

async function recordTogether(sql: Sql, items: readonly RecordedAttempt[]): Promise<undefined[]> {
  const answers = items.map(() => undefined)
  if (items.length === 0) return answers
  return inTransaction(sql, async ({ db }) => {
    const rows = padded(items)
    /** Each delivery's own value, by its id; typed, since PostgreSQL reads a CASE of parameters as text. */
    const byDelivery = (
      type: 'BIGINT' | 'INTEGER' | 'TEXT',
      value: (item: RecordedAttempt) => string | number | null,
    ): RawBuilder<never> =>
      raw<never>`CAST(${valueByKey(
        'webhook_deliveries.delivery_id',
        rows.map((item) => [item.claim.deliveryId, value(item)] as const),
      )} AS ${raw.raw(type)})`
    const moved = await db
      .updateTable('webhook_deliveries')
      .set({
        attempts: byDelivery('INTEGER', (item) => item.attempt.attempt),
        state: byDelivery('TEXT', (item) => item.outcome.state),
        next_attempt_at: byDelivery('BIGINT', ({ outcome }) =>
          outcome.state === 'pending' ? outcome.nextAttemptAtMs : null,
        ),
        claimed_until: null,
      })
      .set((eb) => ({
        delivered_at: eb.fn.coalesce(
          byDelivery('TEXT', ({ outcome }) => (outcome.state === 'delivered' ? outcome.at : null)),
          eb.ref('delivered_at'),
        ),
      }))
      .where(
        'delivery_id',
        'in',
        rows.map((item) => item.claim.deliveryId),
      )
      // Only while the lease is still this claim's: a delivery taken over by another claim is not this one's
      // to record.
      .where(
        'claimed_until',
        '=',
        byDelivery('BIGINT', (item) => item.claim.claimedUntilMs),
      )
      .returning('delivery_id')
      .execute()
    const movedIds = new Set(moved.map((row) => row.delivery_id))
    const recorded = items.filter((item) => movedIds.has(item.claim.deliveryId))
    if (recorded.length === 0) return answers
    await db
      .insertInto('webhook_attempts')
      .values(recorded.map((item) => ({ delivery_id: item.claim.deliveryId, ...item.attempt })))
      .onConflict((oc) => oc.columns(['delivery_id', 'attempt']).doNothing())
      .execute()
    for (const { claim, outcome } of recorded) {
      const endpoint = db.updateTable('webhook_endpoints').where('endpoint_id', '=', claim.endpointId)
      if (outcome.state === 'delivered') {
        // Mostly it was not failing: nothing to write then (the claim read it).
        if (claim.endpointFailing)
          await endpoint.set({ failing_since: null }).where('failing_since', 'is not', null).execute()
        continue
      }
      await endpoint.set({ failing_since: outcome.at }).where('failing_since', 'is', null).execute()
      await endpoint
        .set({ enabled: 0, disabled_reason: 'failing', disabled_at: outcome.at })
        .where('enabled', '=', 1)
        .where('failing_since', '<=', outcome.disableIfFailingSince)
        .execute()
    }
    return answers
  })
}
