import { type Kysely, type RawBuilder, sql } from 'kysely'
import type { PrintJobStatus } from '../../protocol/enums.ts'
import { valueByKey } from './batch-sql.ts'
import { batchedOn, padded } from './batched.ts'
import type { Sql } from './engine.ts'
import type { AppliedChange, JobRuleSpec, StatusChange } from './print-jobs.ts'
import type { Database } from './schema.ts'
import { type SlotOf, statementTemplates } from './statement-templates.ts'

/** One lifecycle change asked of a job (PrintJobRepository.apply). */
interface JobChange {
  id: string
  rule: JobRuleSpec
  change: StatusChange
  hubId: string | undefined
}

type Applied = AppliedChange | undefined

/** The columns a rule records once: the first value stays. */
const RECORDED_ONCE = [
  'reserved_at',
  'started_at',
  'completed_at',
  'failure_reason',
  'offered_at',
  'cancel_requested_at',
  'cancel_reason',
  'duplicate_of',
] as const

const UNSTARTED: readonly PrintJobStatus[] = ['pending', 'reserved']

/** Changes per statement at most: a few parameters each, far under either engine's bound. */
const MAX_BATCH = 256

/**
 * Applies lifecycle rules, each as a compare-and-set: only if the job's status is one the rule starts from
 * and its condition holds at the moment of the write does it move (two changes that cross cannot both
 * apply, on either engine). Changes of one shape (the same rule, the same fields, reported by a hub or not)
 * asked together are one UPDATE (batched.ts), each job's values chosen by a `CASE` on its id; changes of one
 * job asked together apply one after the other, in the order asked (a hub's acknowledgement and its `printed`
 * arriving together). Within a transaction (`sql` is one) each change is its own statement.
 */
export function jobChanges(
  sql: Sql,
): (id: string, rule: JobRuleSpec, change: StatusChange, hubId?: string) => Promise<Applied> {
  const byShape = new Map<string, (change: JobChange) => Promise<Applied>>()
  const update = changeStatement(sql.db)
  const applyOne = (item: JobChange) => {
    const shape = shapeOf(item)
    let apply = byShape.get(shape)
    if (!apply) {
      apply = batchedOn(sql, (items: readonly JobChange[]) => applyTogether(sql.db, update, shape, items), {
        maxBatch: MAX_BATCH,
        key: (change) => change.id,
      })
      byShape.set(shape, apply)
    }
    return apply(item)
  }
  /** The latest change asked of each job whose changes have not all ended. */
  const latest = new Map<string, Promise<unknown>>()
  return (id, rule, change, hubId) => {
    const item = { id, rule, change, hubId }
    const before = latest.get(id)
    const applied = before === undefined ? applyOne(item) : before.then(() => applyOne(item))
    const settled = applied.catch(() => {})
    latest.set(id, settled)
    void settled.then(() => {
      if (latest.get(id) === settled) latest.delete(id)
    })
    return applied
  }
}

/** Changes of one shape can share a statement. */
function shapeOf({ rule, change, hubId }: JobChange): string {
  const fields = Object.keys(change)
    .filter((field) => change[field as keyof StatusChange] !== undefined)
    .sort()
  return JSON.stringify([rule.from, rule.to ?? null, rule.when ?? null, fields, hubId !== undefined])
}

/** Applies changes of one shape to distinct jobs in one UPDATE; answers each with the job as it left it. */
async function applyTogether(
  db: Kysely<Database>,
  update: ChangeStatement,
  shape: string,
  changes: readonly JobChange[],
): Promise<Applied[]> {
  if (changes.length === 0) return []
  const items = padded(changes)
  const { rows } = await update(db, `${shape}:${items.length}`, items)
  const byId = new Map(rows.map((row) => [row.print_job_id, row]))
  return changes.map(({ id }) => {
    const row = byId.get(id)
    return (
      row && {
        printer_id: row.printer_id,
        status: row.status,
        created_at: row.created_at,
        failure_reason: row.failure_reason,
        cancel_requested_at: row.cancel_requested_at,
        cancel_reason: row.cancel_reason as AppliedChange['cancel_reason'],
      }
    )
  })
}

type ChangeStatement = ReturnType<typeof changeStatement>

/**
 * The UPDATE that applies changes of one shape (shapeOf) to distinct jobs, padded (batched.ts): a template per
 * shape and number of jobs (statement-templates.ts), each job's values chosen by a `CASE` on its id.
 */
function changeStatement(db: Kysely<Database>) {
  return statementTemplates((items: readonly JobChange[], slot: SlotOf<readonly JobChange[]>) => {
    const [first] = items
    if (!first) throw new Error('an UPDATE of no job')
    const { rule, change: shape } = first
    const idOf = (i: number) => slot((all) => all[i]?.id ?? '')
    /** Each job's own value of a field, by its id. */
    const byJob = (value: (item: JobChange) => string | null | undefined): RawBuilder<string | null> =>
      valueByKey(
        'print_jobs.print_job_id',
        items.map((_, i) => [idOf(i), slot((all) => (all[i] && value(all[i])) ?? null)] as const),
      )
    const to = rule.to
    const leavesUnstarted = to !== undefined && !UNSTARTED.includes(to)
    let update = db.updateTable('print_jobs').set((eb) => ({
      ...(to !== undefined && { status: sql.lit(to) }),
      ...Object.fromEntries(
        RECORDED_ONCE.filter((column) => shape[column] !== undefined).map((column) => [
          column,
          eb.fn.coalesce(
            column,
            byJob((item) => item.change[column]),
          ),
        ]),
      ),
      ...(shape.failure_detail !== undefined && {
        failure_detail: eb
          .case()
          .when('failure_reason', 'is', null)
          .then(byJob((item) => item.change.failure_detail))
          .else(eb.ref('failure_detail'))
          .end(),
      }),
      ...(leavesUnstarted
        ? { waiting_reason: null }
        : shape.waiting_reason !== undefined && {
            waiting_reason: byJob((item) => item.change.waiting_reason),
          }),
    }))
    update = update
      .where(
        'print_job_id',
        'in',
        items.map((_, i) => idOf(i)),
      )
      // The rule's statuses as literals, not parameters: PostgreSQL then finds a generic plan no dearer than
      // one made for the values (with them as parameters it planned every batch again, 0.5 to 1 ms each), so
      // the prepared statement keeps its plan.
      .where(
        'status',
        'in',
        rule.from.map((status) => sql.lit(status)),
      )
    if (rule.when === 'never_offered') update = update.where('offered_at', 'is', null)
    if (rule.when === 'cancel_requested') update = update.where('cancel_requested_at', 'is not', null)
    if (rule.when === 'no_cancel_requested') update = update.where('cancel_requested_at', 'is', null)
    if (rule.when === 'unoffered')
      update = update.where('offered_at', 'is', null).where('cancel_requested_at', 'is', null)
    // Only a job on a printer of the hub that reports the change.
    if (first.hubId !== undefined)
      update = update.where(({ exists, selectFrom }) =>
        exists(
          selectFrom('printers')
            .select('printers.printer_id')
            .whereRef('printers.printer_id', '=', 'print_jobs.printer_id')
            .where(
              'printers.agent_id',
              '=',
              byJob((item) => item.hubId),
            ),
        ),
      )
    return update.returning([
      'print_job_id',
      'printer_id',
      'status',
      'created_at',
      'failure_reason',
      'cancel_requested_at',
      'cancel_reason',
    ])
  })
}
