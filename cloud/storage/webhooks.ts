import { randomUUID } from 'node:crypto'
import { type ExpressionBuilder, type Kysely, sql as raw, type Selectable } from 'kysely'
import type { PageOf } from '../../protocol/pagination.ts'
import {
  TEST_EVENT_TYPE,
  WEBHOOK_EVENT_TYPES,
  WEBHOOK_LIMITS,
  type WebhookAttempt,
  type WebhookDelivery,
  type WebhookEndpoint,
  type WebhookEventType,
} from '../../protocol/webhooks.ts'
import { padded } from './batched.ts'
import { affected, forUpdate, inTransaction, type Sql } from './engine.ts'
import { type PagedList, pageAfter } from './paging.ts'
import type { Database, WebhookDeliveriesTable, WebhookEndpointsTable } from './schema.ts'
import { type SlotOf, slotsOf, statementTemplates } from './statement-templates.ts'
import { attemptRecorder } from './webhook-attempts.ts'
import { payloadKeeper } from './webhook-payloads.ts'

/**
 * Webhook endpoints, the events written for them and their deliveries (docs/webhooks.md).
 *
 * Events are written by the database itself, in the statement that makes the change (triggers on print_jobs,
 * printers and agents, migration 22): a change is one event, in the same transaction as the change, whatever
 * code path made it, and only when an enabled endpoint of the account subscribes to its type. The same trigger
 * writes one pending delivery per subscribed endpoint. An event keeps a snapshot of what changed (`snapshot`,
 * JSON of the subject's changing columns at the change); its body is rendered once, at its first delivery,
 * and kept (`payload`), so every retry sends the same bytes.
 */
export interface WebhookRepository {
  /** Refused ('limit') when the account has WEBHOOK_LIMITS.endpointsPerAccount already. */
  createEndpoint(
    accountId: string,
    endpoint: NewWebhookEndpoint,
    at: string,
  ): Promise<WebhookEndpoint | 'limit'>
  listEndpoints(accountId: string): Promise<WebhookEndpoint[]>
  findEndpoint(accountId: string, endpointId: string): Promise<WebhookEndpoint | undefined>
  /**
   * Changes what is given. `enabled: true` clears a disable (paused or failing) and `failing_since`;
   * `enabled: false` pauses it (`disabled_reason` `paused`).
   */
  updateEndpoint(
    accountId: string,
    endpointId: string,
    change: WebhookEndpointChange,
    at: string,
  ): Promise<WebhookEndpoint | undefined>
  /** Removes the endpoint, its subscriptions, deliveries and attempts. */
  deleteEndpoint(accountId: string, endpointId: string): Promise<boolean>
  /**
   * A new sealed secret; the current one becomes the previous one, also signed with until
   * `previousValidUntilMs` (null: dropped at once).
   */
  rotateSecret(
    accountId: string,
    endpointId: string,
    sealedSecret: string,
    previousValidUntilMs: number | null,
    at: string,
  ): Promise<WebhookEndpoint | undefined>
  /** Writes a `webhook.test` event (data `{}`) and one delivery of it, to this endpoint only, due now. */
  enqueueTest(accountId: string, endpointId: string, atMs: number): Promise<WebhookDelivery | undefined>
  /** The endpoint's deliveries, newest first, keyset-paged by delivery id. undefined: no such endpoint/cursor. */
  listDeliveries(
    accountId: string,
    endpointId: string,
    limit: number,
    cursor?: string,
  ): Promise<PageOf<WebhookDelivery> | undefined>
  findDelivery(accountId: string, deliveryId: string): Promise<WebhookDelivery | undefined>
  /** Every attempt of a delivery, first first; undefined when the account has no such delivery. */
  listAttempts(accountId: string, deliveryId: string): Promise<WebhookAttempt[] | undefined>
  /** Sends a delivery again by hand: pending and due now, whatever its state; its attempts go on counting. */
  redeliver(accountId: string, deliveryId: string, atMs: number): Promise<WebhookDelivery | undefined>

  /**
   * The delivery worker's side. Takes up to `limit` due deliveries (pending, next attempt at or before `nowMs`,
   * not claimed by a live lease) of enabled endpoints, at most `perEndpoint` of one endpoint, or
   * `perFailingEndpoint` of one that is failing (counting those already claimed and in flight), oldest due first, and leases them until `nowMs + leaseMs`: another node
   * takes a delivery only once its lease has run out (a node killed mid-delivery).
   */
  claimDue(nowMs: number, options: ClaimOptions): Promise<ClaimedDelivery[]>
  /** Keeps the first body rendered for an event; answers the one kept. */
  keepPayload(eventId: string, payload: string): Promise<string>
  /**
   * Records an attempt of a claimed delivery and its outcome, and the endpoint's health: a success clears its
   * `failing_since`; a failure sets it if unset, and disables the endpoint (`failing`) when it was set at or
   * before `disableIfFailingSince`. Ignored when the lease is no longer this claim's (`claimedUntilMs`
   * differs): the delivery was taken over.
   */
  recordAttempt(claim: ClaimedDelivery, attempt: WebhookAttempt, outcome: AttemptOutcome): Promise<void>
  /**
   * Deletes up to `limit` deliveries that ended (delivered or failed) and were first due before `beforeMs`, with
   * their attempts, then the events of before `beforeMs` that no delivery names any more. Answers how many
   * deliveries it deleted (housekeeping repeats it while a whole batch went).
   */
  purgeEnded(beforeMs: number, limit: number): Promise<number>
  /** Figures for /metrics: pending deliveries, and the earliest next attempt (epoch ms) among them, if any. */
  backlog(): Promise<{ pending: number; oldestDueMs: number | null }>
  /** Whether any account has an enabled endpoint: when none has, a job's change makes no delivery. */
  anyEnabledEndpoint(): Promise<boolean>
}

export interface NewWebhookEndpoint {
  /** Made by the caller (the id is the sealed secret's additional data). */
  endpointId: string
  url: string
  eventTypes: readonly WebhookEventType[]
  description: string | null
  sealedSecret: string
}

export interface WebhookEndpointChange {
  url?: string
  eventTypes?: readonly WebhookEventType[]
  description?: string | null
  enabled?: boolean
}

export interface ClaimOptions {
  limit: number
  /** Attempts in flight to one endpoint at most, over every node. */
  perEndpoint: number
  /** The same for an endpoint that is failing (`failing_since` set); `perEndpoint` unless given. */
  perFailingEndpoint?: number
  leaseMs: number
}

/** The deliveries of an endpoint that may be in flight at once: fewer while it is failing. */
const capOf = (options: Pick<ClaimOptions, 'perEndpoint' | 'perFailingEndpoint'>, failing: boolean) =>
  failing ? (options.perFailingEndpoint ?? options.perEndpoint) : options.perEndpoint

/** A delivery as the worker needs it: its endpoint, its secrets, and its event. */
export interface ClaimedDelivery {
  deliveryId: string
  accountId: string
  endpointId: string
  url: string
  /** Sealed: the current secret first, then the previous one while it is still valid. */
  sealedSecrets: string[]
  /** Attempts made before this one. */
  attempts: number
  /** The lease this claim holds (recordAttempt checks it). */
  claimedUntilMs: number
  /** Whether the endpoint's deliveries were failing when it was claimed (`failing_since` set). */
  endpointFailing: boolean
  /** When the delivery was first due (for lag figures). */
  createdAtMs: number
  event: {
    eventId: string
    type: string
    subjectId: string
    occurredAt: string
    /** JSON text of the subject's changing columns at the change. */
    snapshot: string
    /** The body already rendered for this event, if any. */
    payload: string | null
  }
}

export type AttemptOutcome =
  | { state: 'delivered'; at: string }
  | { state: 'pending'; nextAttemptAtMs: number; disableIfFailingSince: string; at: string }
  | { state: 'failed'; disableIfFailingSince: string; at: string }

const EVENT_TYPE_ORDER = new Map<string, number>(WEBHOOK_EVENT_TYPES.map((type, i) => [type, i]))

type EndpointRow = Selectable<WebhookEndpointsTable>
type DeliveryRow = Selectable<WebhookDeliveriesTable> & { event_type: string }

const DELIVERIES: PagedList<'webhook_deliveries'> = {
  table: 'webhook_deliveries',
  id: 'delivery_id',
  scope: {},
}

const isoOf = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString())

function toEndpoint(row: EndpointRow, eventTypes: readonly string[]): WebhookEndpoint {
  return {
    webhook_endpoint_id: row.endpoint_id,
    url: row.url,
    event_types: [...eventTypes].sort(
      (a, b) => (EVENT_TYPE_ORDER.get(a) ?? 99) - (EVENT_TYPE_ORDER.get(b) ?? 99),
    ) as WebhookEventType[],
    description: row.description,
    enabled: row.enabled === 1,
    disabled_reason: row.enabled === 1 ? null : row.disabled_reason,
    disabled_at: row.enabled === 1 ? null : row.disabled_at,
    failing_since: row.failing_since,
    created_at: row.created_at,
    updated_at: row.updated_at,
  }
}

function toDelivery(row: DeliveryRow): WebhookDelivery {
  return {
    webhook_delivery_id: row.delivery_id,
    webhook_endpoint_id: row.endpoint_id,
    event_id: row.event_id,
    event_type: row.event_type,
    state: row.state,
    attempts: row.attempts,
    next_attempt_at: row.state === 'pending' ? isoOf(row.next_attempt_at) : null,
    created_at: row.created_at,
    delivered_at: row.delivered_at,
  }
}

/**
 * `state = 'pending'` with the state as a literal: the partial indexes on pending deliveries (`WHERE state =
 * 'pending'`) serve only a statement that names the state itself. With a parameter PostgreSQL's generic plan
 * (taken after five executions of a prepared statement) could not use them, and read every delivery an endpoint
 * ever had: 5.9 ms per readyEndpoints with 100 endpoints while jobs ran, most of PostgreSQL's time.
 */
const PENDING = raw.lit('pending' as const)

/** A delivery an attempt may start on now: pending, due, and not leased to a live claim. */
const claimable = (nowMs: number) => (w: ExpressionBuilder<Database, 'webhook_deliveries'>) =>
  w.and([
    w('state', '=', PENDING),
    w('next_attempt_at', '<=', nowMs),
    w.or([w('claimed_until', 'is', null), w('claimed_until', '<=', nowMs)]),
  ])

/**
 * The enabled endpoints with a claimable delivery and room for more in flight, the one due longest first. Per
 * endpoint two index probes (webhook_deliveries_pending, _in_flight): when its oldest claimable delivery is
 * due, and how many of its deliveries are in flight. The cost follows the number of endpoints, not the
 * backlog: a dead endpoint with thousands waiting costs what a quiet one does. `among`: only these endpoints.
 */
async function readyEndpoints(
  statement: ReadyStatement,
  db: Kysely<Database>,
  nowMs: number,
  caps: Pick<ClaimOptions, 'perEndpoint' | 'perFailingEndpoint'>,
  among?: readonly string[],
) {
  const endpoints = among && padded(among)
  const { rows } = await statement(db, `${endpoints?.length ?? 'all'}`, { nowMs, endpoints })
  return rows
    .map((e) => ({
      endpointId: e.endpoint_id,
      due: e.due === null ? null : Number(e.due),
      room: capOf(caps, e.failing_since !== null) - Number(e.in_flight),
    }))
    .filter((e): e is { endpointId: string; due: number; room: number } => e.due !== null && e.room > 0)
    .sort((a, b) => a.due - b.due)
}

type ReadyStatement = ReturnType<typeof readyStatement>

/** readyEndpoints' query, as a template per number of endpoints asked, or for all (statement-templates.ts). */
function readyStatement({ db }: Sql) {
  type Args = { nowMs: number; endpoints: readonly string[] | undefined }
  return statementTemplates(({ endpoints }: Args, slot: SlotOf<Args>) => {
    const nowMs = slot((args) => args.nowMs)
    const query = db
      .selectFrom('webhook_endpoints as e')
      .select(['e.endpoint_id', 'e.failing_since'])
      .select((eb) => [
        eb
          .selectFrom('webhook_deliveries')
          .select('next_attempt_at')
          .whereRef('webhook_deliveries.endpoint_id', '=', 'e.endpoint_id')
          .where(claimable(nowMs))
          .orderBy('next_attempt_at')
          .limit(1)
          .as('due'),
        eb
          .selectFrom('webhook_deliveries')
          .select((c) => c.fn.countAll<number>().as('n'))
          .whereRef('webhook_deliveries.endpoint_id', '=', 'e.endpoint_id')
          .where('state', '=', PENDING)
          .where('claimed_until', 'is not', null)
          .where('claimed_until', '>', nowMs)
          .as('in_flight'),
      ])
      .where('e.enabled', '=', 1)
    if (endpoints === undefined) return query
    return query.where(
      'e.endpoint_id',
      'in',
      slotsOf(slot, endpoints, (args) => args.endpoints ?? []),
    )
  })
}

/**
 * A claim's lease on its candidates, and the reading of what it leased, as templates per number of deliveries
 * (padded, batched.ts).
 */
function claimStatements({ db }: Sql) {
  type LeaseArgs = { ids: readonly string[]; nowMs: number; claimedUntilMs: number }
  const lease = statementTemplates(({ ids }: LeaseArgs, slot: SlotOf<LeaseArgs>) =>
    db
      .updateTable('webhook_deliveries')
      .set({ claimed_until: slot((args) => args.claimedUntilMs) })
      .where(
        'delivery_id',
        'in',
        slotsOf(slot, ids, (args) => args.ids),
      )
      .where('state', '=', 'pending')
      .where((w) =>
        w.or([
          w('claimed_until', 'is', null),
          w(
            'claimed_until',
            '<=',
            slot((args) => args.nowMs),
          ),
        ]),
      )
      .returning('delivery_id'),
  )
  const read = statementTemplates((ids: readonly string[], slot: SlotOf<readonly string[]>) =>
    db
      .selectFrom('webhook_deliveries as d')
      .innerJoin('webhook_endpoints as e', 'e.endpoint_id', 'd.endpoint_id')
      .innerJoin('webhook_events as ev', 'ev.event_id', 'd.event_id')
      .select([
        'd.delivery_id',
        'd.account_id',
        'd.endpoint_id',
        'd.attempts',
        'd.created_at_ms',
        'd.next_attempt_at',
        'e.url',
        'e.secret',
        'e.previous_secret',
        'e.previous_secret_until',
        'e.failing_since',
        'ev.event_id',
        'ev.type',
        'ev.subject_id',
        'ev.occurred_at',
        'ev.snapshot',
        'ev.payload',
      ])
      .where(
        'd.delivery_id',
        'in',
        slotsOf(slot, ids, (all) => all),
      )
      .orderBy('d.next_attempt_at')
      .orderBy('d.seq'),
  )
  return { lease, read }
}

/**
 * PostgreSQL: the endpoints of `ready` (the first `limit`) this claim takes, each locked until it commits, those
 * another node is claiming for skipped. Two nodes then never claim one endpoint's deliveries at once: neither
 * waits for the other's rows (a claim that waited took what the other left, and those waits were most of a
 * claim's time on two nodes), and the deliveries in flight, counted after the lock, include every claim
 * committed before it, so that `perEndpoint` holds over all nodes. `FOR NO KEY UPDATE` leaves the key-share
 * locks of the deliveries being written (their foreign key) free. SQLite: every endpoint of `ready`, a claim
 * being the one writer (BEGIN IMMEDIATE).
 */
async function claimLocks(
  tx: Sql,
  ready: Awaited<ReturnType<typeof readyEndpoints>>,
  limit: number,
): Promise<string[] | undefined> {
  if (tx.engine !== 'postgres') return undefined
  const wanted = ready.slice(0, limit).map((endpoint) => endpoint.endpointId)
  const locked = await tx.db
    .selectFrom('webhook_endpoints')
    .select('endpoint_id')
    .where('endpoint_id', 'in', padded(wanted))
    .forNoKeyUpdate()
    .skipLocked()
    .execute()
  return locked.map((row) => row.endpoint_id)
}

/**
 * The deliveries a claim takes, in one statement: from each of the first `limit` ready endpoints (oldest due
 * first; each has one claimable at least), its oldest claimable deliveries up to its room (its cap less those
 * in flight); of those, the `limit` due longest. Each endpoint's part is an index probe
 * (webhook_deliveries_pending), so the cost follows the endpoints asked, not the backlog.
 *
 * PostgreSQL: the endpoints and their rooms are one JSON parameter, each a `LATERAL` probe, so that the
 * statement has one text. As a `UNION ALL` of a part per endpoint it had up to 64 texts, and PostgreSQL
 * planned them again and again at 10–20 ms each: 1.1 s of its CPU in ten seconds of two nodes delivering
 * (docs/performance.md, "Webhook deliveries"). SQLite plans the union in microseconds.
 */
async function claimCandidates(
  tx: Sql,
  nowMs: number,
  ready: Awaited<ReturnType<typeof readyEndpoints>>,
  limit: number,
): Promise<{ delivery_id: string }[]> {
  const parts = ready.slice(0, limit)
  if (parts.length === 0) return []
  if (tx.engine === 'postgres') {
    const wanted = JSON.stringify(parts.map(({ endpointId, room }) => [endpointId, room]))
    return tx.db
      .selectFrom(raw<{ value: unknown }>`jsonb_array_elements(${wanted}::jsonb)`.as('r'))
      .innerJoinLateral(
        (eb) =>
          eb
            .selectFrom('webhook_deliveries')
            .select(['delivery_id', 'next_attempt_at', 'seq'])
            .where('endpoint_id', '=', raw<string>`r.value->>0`)
            .where(claimable(nowMs))
            .orderBy('next_attempt_at')
            .orderBy('seq')
            .limit(raw<number>`(r.value->>1)::integer`)
            .as('c'),
        (join) => join.onTrue(),
      )
      .select('c.delivery_id')
      .orderBy('c.next_attempt_at')
      .orderBy('c.seq')
      .limit(limit)
      .execute()
  }
  const part = ({ endpointId, room }: { endpointId: string; room: number }, index: number) =>
    tx.db
      .selectFrom(
        tx.db
          .selectFrom('webhook_deliveries')
          .select(['delivery_id', 'next_attempt_at', 'seq'])
          .where('endpoint_id', '=', endpointId)
          .where(claimable(nowMs))
          .orderBy('next_attempt_at')
          .orderBy('seq')
          .limit(room)
          .as(`p${index}`),
      )
      .select(['delivery_id', 'next_attempt_at', 'seq'])
  const [first, ...rest] = parts.map(part)
  const union = rest.reduce((all, next) => all.unionAll(next), first!)
  return tx.db
    .selectFrom(union.as('candidates'))
    .select('delivery_id')
    .orderBy('next_attempt_at')
    .orderBy('seq')
    .limit(limit)
    .execute()
}

export function createWebhookRepository(sql: Sql): WebhookRepository {
  const { db } = sql
  const readyQuery = readyStatement(sql)
  const claimQueries = claimStatements(sql)

  const subscriptionsOf = async (tx: Sql, endpointIds: readonly string[]) => {
    const byEndpoint = new Map<string, string[]>(endpointIds.map((id) => [id, []]))
    if (endpointIds.length === 0) return byEndpoint
    const rows = await tx.db
      .selectFrom('webhook_subscriptions')
      .select(['endpoint_id', 'event_type'])
      .where('endpoint_id', 'in', endpointIds)
      .execute()
    for (const row of rows) byEndpoint.get(row.endpoint_id)?.push(row.event_type)
    return byEndpoint
  }

  /** Whether the account has this endpoint. */
  const owns = async (tx: Sql, accountId: string, endpointId: string) =>
    (await tx.db
      .selectFrom('webhook_endpoints')
      .select('endpoint_id')
      .where('account_id', '=', accountId)
      .where('endpoint_id', '=', endpointId)
      .executeTakeFirst()) !== undefined

  const endpointOf = async (tx: Sql, accountId: string, endpointId: string) => {
    const row = await tx.db
      .selectFrom('webhook_endpoints')
      .selectAll()
      .where('account_id', '=', accountId)
      .where('endpoint_id', '=', endpointId)
      .executeTakeFirst()
    if (!row) return undefined
    return toEndpoint(row, (await subscriptionsOf(tx, [endpointId])).get(endpointId) ?? [])
  }

  const subscribe = async (tx: Sql, accountId: string, endpointId: string, types: readonly string[]) => {
    await tx.db.deleteFrom('webhook_subscriptions').where('endpoint_id', '=', endpointId).execute()
    const unique = [...new Set(types)]
    if (unique.length > 0)
      await tx.db
        .insertInto('webhook_subscriptions')
        .values(unique.map((event_type) => ({ endpoint_id: endpointId, account_id: accountId, event_type })))
        .execute()
  }

  const deliveries = (tx: Sql = sql) =>
    tx.db
      .selectFrom('webhook_deliveries as d')
      .innerJoin('webhook_events as ev', 'ev.event_id', 'd.event_id')
      .selectAll('d')
      .select('ev.type as event_type')

  const deliveryOf = async (tx: Sql, accountId: string, deliveryId: string) => {
    const row = await deliveries(tx)
      .where('d.account_id', '=', accountId)
      .where('d.delivery_id', '=', deliveryId)
      .executeTakeFirst()
    return row && toDelivery(row)
  }

  return {
    createEndpoint: (accountId, endpoint, at) =>
      inTransaction(sql, async (tx) => {
        const count = await tx.db
          .selectFrom('webhook_endpoints')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .where('account_id', '=', accountId)
          .executeTakeFirstOrThrow()
        if (Number(count.n) >= WEBHOOK_LIMITS.endpointsPerAccount) return 'limit' as const
        await tx.db
          .insertInto('webhook_endpoints')
          .values({
            endpoint_id: endpoint.endpointId,
            account_id: accountId,
            url: endpoint.url,
            description: endpoint.description,
            secret: endpoint.sealedSecret,
            previous_secret: null,
            previous_secret_until: null,
            enabled: 1,
            disabled_reason: null,
            disabled_at: null,
            failing_since: null,
            created_at: at,
            updated_at: at,
          })
          .execute()
        await subscribe(tx, accountId, endpoint.endpointId, endpoint.eventTypes)
        return (await endpointOf(tx, accountId, endpoint.endpointId))!
      }),

    async listEndpoints(accountId) {
      const rows = await db
        .selectFrom('webhook_endpoints')
        .selectAll()
        .where('account_id', '=', accountId)
        .orderBy('seq')
        .execute()
      const types = await subscriptionsOf(
        sql,
        rows.map((row) => row.endpoint_id),
      )
      return rows.map((row) => toEndpoint(row, types.get(row.endpoint_id) ?? []))
    },

    findEndpoint: (accountId, endpointId) => endpointOf(sql, accountId, endpointId),

    updateEndpoint: (accountId, endpointId, change, at) =>
      inTransaction(sql, async (tx) => {
        const found = await forUpdate(
          tx,
          tx.db
            .selectFrom('webhook_endpoints')
            .select(['enabled'])
            .where('account_id', '=', accountId)
            .where('endpoint_id', '=', endpointId),
        ).executeTakeFirst()
        if (!found) return undefined
        const enabling = change.enabled === true
        const pausing = change.enabled === false && found.enabled === 1
        await tx.db
          .updateTable('webhook_endpoints')
          .set({
            updated_at: at,
            ...(change.url !== undefined && { url: change.url }),
            ...(change.description !== undefined && { description: change.description }),
            ...(enabling && { enabled: 1, disabled_reason: null, disabled_at: null, failing_since: null }),
            ...(pausing && { enabled: 0, disabled_reason: 'paused' as const, disabled_at: at }),
          })
          .where('endpoint_id', '=', endpointId)
          .execute()
        if (change.eventTypes !== undefined) await subscribe(tx, accountId, endpointId, change.eventTypes)
        return endpointOf(tx, accountId, endpointId)
      }),

    deleteEndpoint: (accountId, endpointId) =>
      inTransaction(sql, async (tx) => {
        if (!(await owns(tx, accountId, endpointId))) return false
        await tx.db
          .deleteFrom('webhook_attempts')
          .where('delivery_id', 'in', (eb) =>
            eb.selectFrom('webhook_deliveries').select('delivery_id').where('endpoint_id', '=', endpointId),
          )
          .execute()
        await tx.db.deleteFrom('webhook_deliveries').where('endpoint_id', '=', endpointId).execute()
        await tx.db.deleteFrom('webhook_subscriptions').where('endpoint_id', '=', endpointId).execute()
        await tx.db.deleteFrom('webhook_endpoints').where('endpoint_id', '=', endpointId).execute()
        return true
      }),

    rotateSecret: (accountId, endpointId, sealedSecret, previousValidUntilMs, at) =>
      inTransaction(sql, async (tx) => {
        const changed = await tx.db
          .updateTable('webhook_endpoints')
          .set((eb) => ({
            previous_secret: previousValidUntilMs === null ? null : eb.ref('secret'),
            previous_secret_until: previousValidUntilMs,
            secret: sealedSecret,
            updated_at: at,
          }))
          .where('account_id', '=', accountId)
          .where('endpoint_id', '=', endpointId)
          .executeTakeFirst()
        if (affected(changed) === 0) return undefined
        return endpointOf(tx, accountId, endpointId)
      }),

    enqueueTest: (accountId, endpointId, atMs) =>
      inTransaction(sql, async (tx) => {
        if (!(await owns(tx, accountId, endpointId))) return undefined
        const at = new Date(atMs).toISOString()
        const eventId = randomUUID()
        await tx.db
          .insertInto('webhook_events')
          .values({
            event_id: eventId,
            account_id: accountId,
            type: TEST_EVENT_TYPE,
            subject_id: endpointId,
            occurred_at: at,
            snapshot: '{}',
            payload: null,
          })
          .execute()
        const deliveryId = randomUUID()
        await tx.db
          .insertInto('webhook_deliveries')
          .values({
            delivery_id: deliveryId,
            event_id: eventId,
            endpoint_id: endpointId,
            account_id: accountId,
            state: 'pending',
            attempts: 0,
            next_attempt_at: atMs,
            claimed_until: null,
            created_at: at,
            created_at_ms: atMs,
            delivered_at: null,
          })
          .execute()
        return deliveryOf(tx, accountId, deliveryId)
      }),

    async listDeliveries(accountId, endpointId, limit, cursor) {
      if (!(await owns(sql, accountId, endpointId))) return undefined
      return pageAfter(db, {
        list: { ...DELIVERIES, scope: { account_id: accountId, endpoint_id: endpointId } },
        cursor,
        limit,
        fetch: (beforeSeq) =>
          deliveries()
            .where('d.endpoint_id', '=', endpointId)
            .where('d.seq', '<', beforeSeq)
            .orderBy('d.seq', 'desc')
            .limit(limit + 1)
            .execute(),
        map: toDelivery,
        idOf: (delivery) => delivery.webhook_delivery_id,
      })
    },

    findDelivery: (accountId, deliveryId) => deliveryOf(sql, accountId, deliveryId),

    async listAttempts(accountId, deliveryId) {
      const delivery = await deliveryOf(sql, accountId, deliveryId)
      if (!delivery) return undefined
      const rows = await db
        .selectFrom('webhook_attempts')
        .select(['attempt', 'attempted_at', 'duration_ms', 'status_code', 'error'])
        .where('delivery_id', '=', deliveryId)
        .orderBy('attempt')
        .execute()
      return rows
    },

    redeliver: (accountId, deliveryId, atMs) =>
      inTransaction(sql, async (tx) => {
        // One in flight now (leased) is left to finish: a second sender would double it.
        await tx.db
          .updateTable('webhook_deliveries')
          .set({ state: 'pending', next_attempt_at: atMs, claimed_until: null, delivered_at: null })
          .where('account_id', '=', accountId)
          .where('delivery_id', '=', deliveryId)
          .where((eb) =>
            eb.or([
              eb('state', '<>', 'pending'),
              eb('claimed_until', 'is', null),
              eb('claimed_until', '<=', atMs),
            ]),
          )
          .execute()
        return deliveryOf(tx, accountId, deliveryId)
      }),

    async claimDue(nowMs, options) {
      const { limit, leaseMs } = options
      // Read first, outside a transaction: an idle cloud polls this several times a second, and on SQLite a
      // write transaction would take the database's one write lock each time.
      const seen = await readyEndpoints(readyQuery, sql.db, nowMs, options)
      if (seen.length === 0) return []
      return inTransaction(sql, async (tx) => {
        const locked = await claimLocks(tx, seen, limit)
        if (locked?.length === 0) return []
        const ready = await readyEndpoints(readyQuery, tx.db, nowMs, options, locked)
        const candidates = await claimCandidates(tx, nowMs, ready, limit)
        if (candidates.length === 0) return []
        const claimedUntilMs = nowMs + leaseMs
        // The lease is taken only where no other claim took it meanwhile (PostgreSQL re-checks the condition
        // on each row once a concurrent claim's row lock is released).
        const ids = padded(candidates.map((c) => c.delivery_id))
        const { rows: leased } = await claimQueries.lease(tx.db, `${ids.length}`, {
          ids,
          nowMs,
          claimedUntilMs,
        })
        if (leased.length === 0) return []
        const leasedIds = padded(leased.map((l) => l.delivery_id))
        const { rows } = await claimQueries.read(tx.db, `${leasedIds.length}`, leasedIds)
        return rows.map((row) => ({
          deliveryId: row.delivery_id,
          accountId: row.account_id,
          endpointId: row.endpoint_id,
          url: row.url,
          sealedSecrets:
            row.previous_secret !== null && (row.previous_secret_until ?? 0) > nowMs
              ? [row.secret, row.previous_secret]
              : [row.secret],
          attempts: row.attempts,
          claimedUntilMs,
          endpointFailing: row.failing_since !== null,
          createdAtMs: row.created_at_ms,
          event: {
            eventId: row.event_id,
            type: row.type,
            subjectId: row.subject_id,
            occurredAt: row.occurred_at,
            snapshot: row.snapshot,
            payload: row.payload,
          },
        }))
      })
    },

    keepPayload: payloadKeeper(sql),

    recordAttempt: attemptRecorder(sql),

    purgeEnded: (beforeMs, limit) =>
      inTransaction(sql, async (tx) => {
        const ended = await tx.db
          .selectFrom('webhook_deliveries')
          .select('delivery_id')
          .where('state', 'in', ['delivered', 'failed'])
          .where('created_at_ms', '<', beforeMs)
          .orderBy('seq')
          .limit(limit)
          .execute()
        const ids = ended.map((row) => row.delivery_id)
        if (ids.length > 0) {
          await tx.db.deleteFrom('webhook_attempts').where('delivery_id', 'in', ids).execute()
          await tx.db.deleteFrom('webhook_deliveries').where('delivery_id', 'in', ids).execute()
        }
        const before = new Date(beforeMs).toISOString()
        await tx.db
          .deleteFrom('webhook_events')
          .where('occurred_at', '<', before)
          .where(({ not, exists, selectFrom }) =>
            not(
              exists(
                selectFrom('webhook_deliveries as d')
                  .select('d.delivery_id')
                  .whereRef('d.event_id', '=', 'webhook_events.event_id'),
              ),
            ),
          )
          .execute()
        return ids.length
      }),

    async anyEnabledEndpoint() {
      const row = await db
        .selectFrom('webhook_endpoints')
        .select('endpoint_id')
        .where('enabled', '=', 1)
        .limit(1)
        .executeTakeFirst()
      return row !== undefined
    },

    async backlog() {
      const row = await db
        .selectFrom('webhook_deliveries')
        .select((eb) => [eb.fn.countAll<number>().as('pending'), eb.fn.min('next_attempt_at').as('oldest')])
        .where('state', '=', PENDING)
        .executeTakeFirstOrThrow()
      return { pending: Number(row.pending), oldestDueMs: row.oldest === null ? null : Number(row.oldest) }
    },
  }
}
