import { type RawBuilder, sql as raw } from 'kysely'
import type { WebhookAttempt } from '../../protocol/webhooks.ts'
import { valueByKey } from './batch-sql.ts'
import { batchedOn, padded, powersOfTwo } from './batched.ts'
import { inTransaction, type Sql } from './engine.ts'
import { type SlotOf, statementTemplates } from './statement-templates.ts'
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
  const statements = attemptStatements(sql)
  const record = batchedOn(
    sql,
    (items: readonly RecordedAttempt[]) => recordTogether(sql, statements, items),
    {
      maxBatch: MAX_BATCH,
      key: (item) => item.claim.deliveryId,
    },
  )
  return (claim, attempt, outcome) => record({ claim, attempt, outcome })
}

type AttemptStatements = ReturnType<typeof attemptStatements>

/** An attempt's columns beside its delivery's id. */
const ATTEMPT_COLUMNS = [
  'attempt',
  'attempted_at',
  'duration_ms',
  'status_code',
  'error',
] as const satisfies readonly (keyof WebhookAttempt)[]

/**
 * A batch's statements, as templates (statement-templates.ts): the UPDATE that moves the deliveries, padded
 * (batched.ts), each row's values chosen by a `CASE` on its id; the INSERT of their attempts, per number of
 * rows.
 */
function attemptStatements({ db }: Sql) {
  const insert = statementTemplates(
    (rows: readonly RecordedAttempt[], slot: SlotOf<readonly RecordedAttempt[]>) =>
      db
        .insertInto('webhook_attempts')
        .values(
          rows.map((_, i) => ({
            delivery_id: slot((all) => all[i]?.claim.deliveryId ?? ''),
            ...(Object.fromEntries(
              ATTEMPT_COLUMNS.map((column) => [column, slot((all) => all[i]?.attempt[column] ?? null)]),
            ) as unknown as WebhookAttempt),
          })),
        )
        .onConflict((oc) => oc.columns(['delivery_id', 'attempt']).doNothing()),
  )
  const move = statementTemplates(
    (rows: readonly RecordedAttempt[], slot: SlotOf<readonly RecordedAttempt[]>) => {
      /** Each delivery's own value, by its id; typed, since PostgreSQL reads a CASE of parameters as text. */
      const byDelivery = (
        type: 'BIGINT' | 'INTEGER' | 'TEXT',
        value: (item: RecordedAttempt) => string | number | null,
      ): RawBuilder<never> =>
        raw<never>`CAST(${valueByKey(
          'webhook_deliveries.delivery_id',
          rows.map(
            (_, i) =>
              [
                slot((all) => all[i]?.claim.deliveryId ?? ''),
                slot((all) => (all[i] ? value(all[i]) : null)),
              ] as const,
          ),
        )} AS ${raw.raw(type)})`
      return (
        db
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
            rows.map((_, i) => slot((all) => all[i]?.claim.deliveryId ?? '')),
          )
          // Only while the lease is still this claim's: a delivery taken over by another claim is not this one's
          // to record.
          .where(
            'claimed_until',
            '=',
            byDelivery('BIGINT', (item) => item.claim.claimedUntilMs),
          )
          .returning('delivery_id')
      )
    },
  )
  return { move, insert }
}

async function recordTogether(
  sql: Sql,
  statements: AttemptStatements,
  items: readonly RecordedAttempt[],
): Promise<undefined[]> {
  const answers = items.map(() => undefined)
  if (items.length === 0) return answers
  return inTransaction(sql, async ({ db }) => {
    const rows = padded(items)
    const { rows: moved } = await statements.move(db, `${rows.length}`, rows)
    const movedIds = new Set(moved.map((row) => row.delivery_id))
    const recorded = items.filter((item) => movedIds.has(item.claim.deliveryId))
    if (recorded.length === 0) return answers
    // In pieces of powers of two, so that the INSERT has a few texts (batched.ts).
    for (const piece of powersOfTwo(recorded)) await statements.insert(db, `${piece.length}`, piece)
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
