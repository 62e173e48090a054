import { randomUUID } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { JOB_RULES } from '../../../cloud/print-jobs/lifecycle.ts'
import type { NewWebhookEndpoint } from '../../../cloud/storage/webhooks.ts'
import { WEBHOOK_LIMITS, type WebhookEventType } from '../../../protocol/webhooks.ts'
import { ENGINES } from './engines.ts'
import { shopWithPrintersOnHubs, storeJob } from './stored-jobs.ts'

const AT = '2026-11-28T10:00:00.000Z'
const CLAIM = { limit: 50, perEndpoint: 10, leaseMs: 30_000 }

const endpoint = (
  eventTypes: WebhookEventType[],
  url = 'https://hooks.example.com/print',
): NewWebhookEndpoint => ({
  endpointId: randomUUID(),
  url,
  eventTypes,
  description: null,
  sealedSecret: `v1.sealed-${randomUUID()}`,
})

describe.each(ENGINES)('webhooks on %s', (engine) => {
  const shop = shopWithPrintersOnHubs(engine)
  const storage = () => shop.t.storage
  const events = () => shop.t.db.selectFrom('webhook_events').selectAll().orderBy('seq').execute()
  const deliveriesOf = (endpointId: string) =>
    shop.t.db
      .selectFrom('webhook_deliveries')
      .selectAll()
      .where('endpoint_id', '=', endpointId)
      .orderBy('seq')
      .execute()
  const create = async (input: NewWebhookEndpoint, accountId = shop.accountId) => {
    const made = await storage().webhooks.createEndpoint(accountId, input, AT)
    if (made === 'limit') throw new Error('limit')
    return made
  }

  it('tells whether any account has an enabled endpoint', async () => {
    expect(await storage().webhooks.anyEnabledEndpoint()).toBe(false)
    const input = endpoint(['print_job.printed'])
    await create(input)
    expect(await storage().webhooks.anyEnabledEndpoint()).toBe(true)
    await shop.t.db
      .updateTable('webhook_endpoints')
      .set({ enabled: 0 })
      .where('endpoint_id', '=', input.endpointId)
      .execute()
    expect(await storage().webhooks.anyEnabledEndpoint()).toBe(false)
  })

  it('keeps an endpoint with its event types in the documented order, never another account’s', async () => {
    const input = { ...endpoint(['print_job.printed', 'print_job.failed']), description: 'Till' }
    const made = await create(input)
    expect(made).toStrictEqual({
      webhook_endpoint_id: input.endpointId,
      url: 'https://hooks.example.com/print',
      event_types: ['print_job.printed', 'print_job.failed'],
      description: 'Till',
      enabled: true,
      disabled_reason: null,
      disabled_at: null,
      failing_since: null,
      created_at: AT,
      updated_at: AT,
    })
    const other = (await storage().accounts.create('Other')).account_id
    expect(await storage().webhooks.findEndpoint(other, input.endpointId)).toBeUndefined()
    expect(await storage().webhooks.listEndpoints(other)).toStrictEqual([])
    expect(await storage().webhooks.listEndpoints(shop.accountId)).toStrictEqual([made])
    expect(await storage().webhooks.deleteEndpoint(other, input.endpointId)).toBe(false)
    expect(await storage().webhooks.deleteEndpoint(shop.accountId, input.endpointId)).toBe(true)
    expect(await storage().webhooks.findEndpoint(shop.accountId, input.endpointId)).toBeUndefined()
  })

  it(`refuses the account's endpoint number ${WEBHOOK_LIMITS.endpointsPerAccount + 1}`, async () => {
    for (let i = 0; i < WEBHOOK_LIMITS.endpointsPerAccount; i++) await create(endpoint(['print_job.printed']))
    expect(await storage().webhooks.createEndpoint(shop.accountId, endpoint(['print_job.printed']), AT)).toBe(
      'limit',
    )
  })

  it('pauses, changes and re-enables an endpoint; rotation keeps the old secret only while asked', async () => {
    const input = endpoint(['print_job.printed'])
    await create(input)
    const paused = await storage().webhooks.updateEndpoint(
      shop.accountId,
      input.endpointId,
      { enabled: false, eventTypes: ['agent.offline', 'agent.online'], description: 'Back office' },
      '2026-11-28T11:00:00.000Z',
    )
    expect(paused).toMatchObject({
      enabled: false,
      disabled_reason: 'paused',
      disabled_at: '2026-11-28T11:00:00.000Z',
      event_types: ['agent.online', 'agent.offline'],
      description: 'Back office',
      updated_at: '2026-11-28T11:00:00.000Z',
    })
    const enabled = await storage().webhooks.updateEndpoint(
      shop.accountId,
      input.endpointId,
      { enabled: true },
      '2026-11-28T12:00:00.000Z',
    )
    expect(enabled).toMatchObject({ enabled: true, disabled_reason: null, disabled_at: null })

    await storage().webhooks.rotateSecret(shop.accountId, input.endpointId, 'v1.new', 5_000, AT)
    const row = () =>
      shop.t.db
        .selectFrom('webhook_endpoints')
        .select(['secret', 'previous_secret', 'previous_secret_until'])
        .where('endpoint_id', '=', input.endpointId)
        .executeTakeFirstOrThrow()
    expect(await row()).toStrictEqual({
      secret: 'v1.new',
      previous_secret: input.sealedSecret,
      previous_secret_until: 5_000,
    })
    await storage().webhooks.rotateSecret(shop.accountId, input.endpointId, 'v1.newer', null, AT)
    expect(await row()).toStrictEqual({
      secret: 'v1.newer',
      previous_secret: null,
      previous_secret_until: null,
    })
  })

  it('writes one event per status a job enters, each with one delivery per subscribed enabled endpoint', async () => {
    const everything = endpoint([
      'print_job.pending',
      'print_job.reserved',
      'print_job.printing',
      'print_job.printed',
    ])
    const printedOnly = endpoint(['print_job.printed'])
    const paused = endpoint(['print_job.printed'])
    await create(everything)
    await create(printedOnly)
    await create(paused)
    await storage().webhooks.updateEndpoint(shop.accountId, paused.endpointId, { enabled: false }, AT)

    const job = await storeJob(storage(), shop.accountId, shop.printerOf.online)
    const apply = (rule: keyof typeof JOB_RULES, change = {}) =>
      storage().printJobs.apply(job.print_job_id, JOB_RULES[rule], change)
    await apply('offer', { offered_at: AT }) // no status change: no event
    await apply('reserve', { reserved_at: AT })
    await apply('wait', { waiting_reason: 'paper_out' }) // no status change
    await apply('start', { started_at: AT })
    await apply('print', { completed_at: '2026-11-28T10:00:01.000Z' })
    await apply('print', { completed_at: '2026-11-28T10:00:02.000Z' }) // refused: already printed
    // A write of the status it already has is no change.
    await shop.t.db
      .updateTable('print_jobs')
      .set({ status: 'printed' })
      .where('print_job_id', '=', job.print_job_id)
      .execute()

    const written = await events()
    expect(written.map((e) => e.type)).toStrictEqual([
      'print_job.pending',
      'print_job.reserved',
      'print_job.printing',
      'print_job.printed',
    ])
    for (const event of written) {
      expect(event).toMatchObject({ account_id: shop.accountId, subject_id: job.print_job_id, payload: null })
      expect(event.event_id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
      expect(Date.parse(event.occurred_at)).toBeGreaterThan(Date.now() - 60_000)
    }
    expect(JSON.parse(written[3]!.snapshot)).toStrictEqual({
      status: 'printed',
      reserved_at: AT,
      started_at: AT,
      completed_at: '2026-11-28T10:00:01.000Z',
      failure_reason: null,
      failure_detail: null,
      waiting_reason: null,
    })
    expect(JSON.parse(written[1]!.snapshot)).toMatchObject({ status: 'reserved', started_at: null })
    expect((await deliveriesOf(everything.endpointId)).map((d) => d.event_id)).toStrictEqual(
      written.map((e) => e.event_id),
    )
    const [printed] = await deliveriesOf(printedOnly.endpointId)
    expect(printed).toMatchObject({ event_id: written[3]!.event_id, state: 'pending', attempts: 0 })
    expect(await deliveriesOf(paused.endpointId)).toStrictEqual([])
  })

  it('writes the events of jobs changed by one statement, one per job whose status changed', async () => {
    const reservedOnly = endpoint(['print_job.reserved'])
    const both = endpoint(['print_job.pending', 'print_job.reserved'])
    await create(reservedOnly)
    await create(both)
    const jobs = [
      await storeJob(storage(), shop.accountId, shop.printerOf.online),
      await storeJob(storage(), shop.accountId, shop.printerOf.online),
      await storeJob(storage(), shop.accountId, shop.printerOf.online),
    ]
    const ids = jobs.map((job) => job.print_job_id)
    await storage().printJobs.apply(ids[0]!, JOB_RULES.reserve, { reserved_at: AT })
    // One statement: the first job is reserved already, the other two change.
    await shop.t.db
      .updateTable('print_jobs')
      .set({ status: 'reserved' })
      .where('print_job_id', 'in', ids)
      .execute()
    // One statement changing no status.
    await shop.t.db
      .updateTable('print_jobs')
      .set({ waiting_reason: 'paper_out' })
      .where('print_job_id', 'in', ids)
      .execute()

    // Within one statement the jobs' order is the engine's: compared as sets.
    const written = await events()
    const key = (type: string, id: string) => `${type} ${id}`
    expect(written.map((e) => key(e.type, e.subject_id)).sort()).toStrictEqual(
      [
        ...ids.map((id) => key('print_job.pending', id)),
        ...ids.map((id) => key('print_job.reserved', id)),
      ].sort(),
    )
    const reserved = written.filter((e) => e.type === 'print_job.reserved').map((e) => e.event_id)
    expect((await deliveriesOf(reservedOnly.endpointId)).map((d) => d.event_id).sort()).toStrictEqual(
      [...reserved].sort(),
    )
    expect((await deliveriesOf(both.endpointId)).map((d) => d.event_id).sort()).toStrictEqual(
      written.map((e) => e.event_id).sort(),
    )
  })

  it('writes nothing for an account without endpoints', async () => {
    const other = (await storage().accounts.create('Other')).account_id
    await create(endpoint(['print_job.pending']), other)
    await storeJob(storage(), shop.accountId, shop.printerOf.online)
    expect(await events()).toStrictEqual([])
  })

  it('writes printer and hub presence as it changes, and health only when its state or reasons change', async () => {
    const watcher = endpoint([
      'printer.online',
      'printer.offline',
      'printer.health_changed',
      'agent.offline',
      'agent.online',
    ])
    await create(watcher)
    const setOnline = (online: number) =>
      shop.t.db.updateTable('agents').set({ online }).where('agent_id', '=', shop.hubOf.online).execute()
    const setHealth = (state: string, reasons: string[], checkedAt: string) =>
      shop.t.db
        .updateTable('printers')
        .set({ health: JSON.stringify({ state, reasons, checked_at: checkedAt }) })
        .where('printer_id', '=', shop.printerOf.online)
        .execute()
    await setHealth('ready', [], '2026-11-28T10:00:00.000Z')
    await setHealth('ready', [], '2026-11-28T10:00:30.000Z') // only checked_at moved
    await setHealth('attention', ['paper_out'], '2026-11-28T10:01:00.000Z')
    await setOnline(0)
    await setOnline(0) // no change
    await setOnline(1)
    // The printer on the offline hub goes unreported and reported: it was never online, so no event.
    await shop.t.db
      .updateTable('printers')
      .set({ reported: 0 })
      .where('printer_id', '=', shop.printerOf.offline)
      .execute()
    await shop.t.db
      .updateTable('printers')
      .set({ reported: 1 })
      .where('printer_id', '=', shop.printerOf.offline)
      .execute()
    await shop.t.db
      .updateTable('printers')
      .set({ removed_at: AT })
      .where('printer_id', '=', shop.printerOf.online)
      .execute()

    const written = (await events()).map((e) => [e.type, e.subject_id, JSON.parse(e.snapshot)])
    const attention = { state: 'attention', reasons: ['paper_out'], checked_at: '2026-11-28T10:01:00.000Z' }
    expect(written).toStrictEqual([
      [
        'printer.health_changed',
        shop.printerOf.online,
        { online: true, health: { state: 'ready', reasons: [], checked_at: '2026-11-28T10:00:00.000Z' } },
      ],
      ['printer.health_changed', shop.printerOf.online, { online: true, health: attention }],
      ['agent.offline', shop.hubOf.online, expect.objectContaining({ online: false })],
      ['printer.offline', shop.printerOf.online, { online: false, health: attention }],
      ['agent.online', shop.hubOf.online, expect.objectContaining({ online: true })],
      ['printer.online', shop.printerOf.online, { online: true, health: attention }],
      ['printer.offline', shop.printerOf.online, { online: false, health: attention }],
    ])
    expect(await deliveriesOf(watcher.endpointId)).toHaveLength(7)
  })

  describe('delivery', () => {
    const oneDue = async (types: WebhookEventType[] = ['print_job.pending']) => {
      const input = endpoint(types)
      await create(input)
      await storeJob(storage(), shop.accountId, shop.printerOf.online)
      return input
    }

    it('leases a due delivery to one claim until the lease runs out, with its event and secrets', async () => {
      const input = await oneDue()
      const now = Date.now() + 1000
      const [claim, ...more] = await storage().webhooks.claimDue(now, CLAIM)
      expect(more).toStrictEqual([])
      const [event] = await events()
      expect(claim).toStrictEqual({
        deliveryId: expect.any(String),
        accountId: shop.accountId,
        endpointId: input.endpointId,
        url: input.url,
        sealedSecrets: [input.sealedSecret],
        attempts: 0,
        claimedUntilMs: now + CLAIM.leaseMs,
        endpointFailing: false,
        createdAtMs: expect.any(Number),
        event: {
          eventId: event!.event_id,
          type: 'print_job.pending',
          subjectId: event!.subject_id,
          occurredAt: event!.occurred_at,
          snapshot: event!.snapshot,
          payload: null,
        },
      })
      expect(await storage().webhooks.claimDue(now + 1, CLAIM)).toStrictEqual([])
      // A node killed mid-delivery: another takes it once the lease has run out.
      const [again] = await storage().webhooks.claimDue(now + CLAIM.leaseMs, CLAIM)
      expect(again?.deliveryId).toBe(claim!.deliveryId)
      // The first claim's late report is ignored; the second's counts.
      const attempt = { attempt: 1, attempted_at: AT, duration_ms: 5, status_code: 200, error: null }
      await storage().webhooks.recordAttempt(claim!, attempt, { state: 'delivered', at: AT })
      expect((await deliveriesOf(input.endpointId))[0]).toMatchObject({ state: 'pending', attempts: 0 })
      await storage().webhooks.recordAttempt(again!, attempt, { state: 'delivered', at: AT })
      expect((await deliveriesOf(input.endpointId))[0]).toMatchObject({
        state: 'delivered',
        attempts: 1,
        delivered_at: AT,
        next_attempt_at: null,
        claimed_until: null,
      })
      expect(await storage().webhooks.listAttempts(shop.accountId, claim!.deliveryId)).toStrictEqual([
        attempt,
      ])
    })

    it('gives one endpoint at most perEndpoint at a time, in flight included, and others theirs', async () => {
      const slow = await oneDue()
      for (let i = 0; i < 4; i++) await storeJob(storage(), shop.accountId, shop.printerOf.online)
      const now = Date.now() + 1000
      const first = await storage().webhooks.claimDue(now, { ...CLAIM, perEndpoint: 2 })
      expect(first.map((c) => c.endpointId)).toStrictEqual([slow.endpointId, slow.endpointId])
      expect(await storage().webhooks.claimDue(now, { ...CLAIM, perEndpoint: 2 })).toStrictEqual([])
      const fast = endpoint(['print_job.pending'])
      await create(fast)
      await storeJob(storage(), shop.accountId, shop.printerOf.online)
      const next = await storage().webhooks.claimDue(now, { ...CLAIM, perEndpoint: 2 })
      expect(next.map((c) => c.endpointId)).toStrictEqual([fast.endpointId])
    })

    it('gives a failing endpoint at most perFailingEndpoint at a time, and perEndpoint once it is healthy', async () => {
      const input = await oneDue()
      for (let i = 0; i < 4; i++) await storeJob(storage(), shop.accountId, shop.printerOf.online)
      const failing = (since: string | null) =>
        shop.t.db
          .updateTable('webhook_endpoints')
          .set({ failing_since: since })
          .where('endpoint_id', '=', input.endpointId)
          .execute()
      await failing(AT)
      const now = Date.now() + 1000
      const caps = { ...CLAIM, perEndpoint: 3, perFailingEndpoint: 1 }
      expect(await storage().webhooks.claimDue(now, caps)).toHaveLength(1)
      expect(await storage().webhooks.claimDue(now, caps)).toStrictEqual([])
      await failing(null)
      expect(await storage().webhooks.claimDue(now, caps)).toHaveLength(2)
      expect(await storage().webhooks.claimDue(now, caps)).toStrictEqual([])
    })

    it.runIf(engine === 'postgres')(
      'skips, without waiting for it, an endpoint another claim is taking (another node)',
      async () => {
        const held = endpoint(['print_job.pending'])
        const free = endpoint(['print_job.pending'])
        await create(held)
        await create(free)
        await storeJob(storage(), shop.accountId, shop.printerOf.online)
        const now = Date.now() + 1000
        // The other node's claim: its transaction holds the endpoint's lock until it ends.
        const claims = await shop.t.db.transaction().execute(async (other) => {
          await other
            .selectFrom('webhook_endpoints')
            .select('endpoint_id')
            .where('endpoint_id', '=', held.endpointId)
            .forNoKeyUpdate()
            .execute()
          return storage().webhooks.claimDue(now, CLAIM)
        })
        expect(claims.map((c) => c.endpointId)).toStrictEqual([free.endpointId])
        const after = await storage().webhooks.claimDue(now, CLAIM)
        expect(after.map((c) => c.endpointId)).toStrictEqual([held.endpointId])
      },
    )

    it('retries when told, fails when the retries are over, and disables an endpoint failing since the bound', async () => {
      const input = await oneDue()
      const now = Date.now() + 1000
      const [claim] = await storage().webhooks.claimDue(now, CLAIM)
      const failed = (attempt: number) => ({
        attempt,
        attempted_at: AT,
        duration_ms: 15000,
        status_code: null,
        error: 'timeout after 15000 ms',
      })
      await storage().webhooks.recordAttempt(claim!, failed(1), {
        state: 'pending',
        nextAttemptAtMs: now + 5000,
        disableIfFailingSince: '2026-11-23T10:00:00.000Z',
        at: AT,
      })
      expect(await storage().webhooks.claimDue(now + 4999, CLAIM)).toStrictEqual([])
      expect(await storage().webhooks.findEndpoint(shop.accountId, input.endpointId)).toMatchObject({
        enabled: true,
        failing_since: AT,
      })
      const [second] = await storage().webhooks.claimDue(now + 5000, CLAIM)
      expect(second?.attempts).toBe(1)
      // Failing since AT, and AT is at or before the bound: disabled.
      await storage().webhooks.recordAttempt(second!, failed(2), {
        state: 'failed',
        disableIfFailingSince: AT,
        at: '2026-11-28T10:05:00.000Z',
      })
      expect(await storage().webhooks.findEndpoint(shop.accountId, input.endpointId)).toMatchObject({
        enabled: false,
        disabled_reason: 'failing',
        disabled_at: '2026-11-28T10:05:00.000Z',
        failing_since: AT,
      })
      expect(await storage().webhooks.findDelivery(shop.accountId, second!.deliveryId)).toMatchObject({
        state: 'failed',
        attempts: 2,
        next_attempt_at: null,
      })
      // Disabled: nothing of it is claimed, even when sent again by hand, until it is enabled.
      await storage().webhooks.redeliver(shop.accountId, second!.deliveryId, now)
      expect(await storage().webhooks.claimDue(now + 10_000, CLAIM)).toStrictEqual([])
      await storage().webhooks.updateEndpoint(shop.accountId, input.endpointId, { enabled: true }, AT)
      const [third] = await storage().webhooks.claimDue(now + 10_000, CLAIM)
      expect(third?.attempts).toBe(2)
      expect(
        (await storage().webhooks.listAttempts(shop.accountId, second!.deliveryId))?.map((a) => a.attempt),
      ).toStrictEqual([1, 2])
    })

    it('clears failing_since at the first success after failures', async () => {
      const input = await oneDue()
      const now = Date.now() + 1000
      const [claim] = await storage().webhooks.claimDue(now, CLAIM)
      expect(claim?.endpointFailing).toBe(false)
      const attempt = { attempt: 1, attempted_at: AT, duration_ms: 3, status_code: 503, error: null }
      await storage().webhooks.recordAttempt(claim!, attempt, {
        state: 'pending',
        nextAttemptAtMs: now,
        disableIfFailingSince: '2000-01-01T00:00:00.000Z',
        at: AT,
      })
      const [again] = await storage().webhooks.claimDue(now, CLAIM)
      expect(again?.endpointFailing).toBe(true)
      await storage().webhooks.recordAttempt(
        again!,
        { ...attempt, attempt: 2, status_code: 200 },
        {
          state: 'delivered',
          at: AT,
        },
      )
      expect(await storage().webhooks.findEndpoint(shop.accountId, input.endpointId)).toMatchObject({
        enabled: true,
        failing_since: null,
      })
    })

    it('lists deliveries newest first by page, and sends a test event to one endpoint only', async () => {
      const input = await oneDue()
      const other = endpoint(['print_job.pending'])
      await create(other)
      const test = await storage().webhooks.enqueueTest(shop.accountId, input.endpointId, Date.now())
      expect(test).toMatchObject({
        webhook_endpoint_id: input.endpointId,
        event_type: 'webhook.test',
        state: 'pending',
      })
      const page = await storage().webhooks.listDeliveries(shop.accountId, input.endpointId, 1)
      expect(page?.data.map((d) => d.event_type)).toStrictEqual(['webhook.test'])
      const rest = await storage().webhooks.listDeliveries(
        shop.accountId,
        input.endpointId,
        1,
        page!.next_cursor!,
      )
      expect(rest).toMatchObject({ data: [{ event_type: 'print_job.pending' }], next_cursor: null })
      expect(await deliveriesOf(other.endpointId)).toStrictEqual([])
      const stranger = (await storage().accounts.create('Other')).account_id
      expect(await storage().webhooks.listDeliveries(stranger, input.endpointId, 10)).toBeUndefined()
      expect(await storage().webhooks.enqueueTest(stranger, input.endpointId, Date.now())).toBeUndefined()
      expect(await storage().webhooks.listAttempts(stranger, test!.webhook_delivery_id)).toBeUndefined()
    })

    it('purges deliveries that ended before the bound with their attempts and events, never a pending one', async () => {
      const input = await oneDue(['print_job.pending', 'print_job.reserved'])
      const job = await storeJob(storage(), shop.accountId, shop.printerOf.online)
      await storage().printJobs.apply(job.print_job_id, JOB_RULES.reserve, { reserved_at: AT })
      const now = Date.now() + 1000
      const [first, second] = await storage().webhooks.claimDue(now, CLAIM)
      const attempt = { attempt: 1, attempted_at: AT, duration_ms: 5, status_code: 200, error: null }
      await storage().webhooks.recordAttempt(first!, attempt, { state: 'delivered', at: AT })
      await storage().webhooks.recordAttempt(
        second!,
        { ...attempt, status_code: 500 },
        {
          state: 'failed',
          disableIfFailingSince: '2000-01-01T00:00:00.000Z',
          at: AT,
        },
      )
      expect(await deliveriesOf(input.endpointId)).toHaveLength(3)
      // Before the bound: nothing is that old yet.
      expect(await storage().webhooks.purgeEnded(Date.now() - 60_000, 100)).toBe(0)
      // After it: the two that ended go, one at a time, with their attempts and events; the pending one stays.
      expect(await storage().webhooks.purgeEnded(now + 60_000, 1)).toBe(1)
      expect(await storage().webhooks.purgeEnded(now + 60_000, 100)).toBe(1)
      const left = await deliveriesOf(input.endpointId)
      expect(left.map((d) => d.state)).toStrictEqual(['pending'])
      expect((await events()).map((e) => e.event_id)).toStrictEqual([left[0]!.event_id])
      expect(await shop.t.db.selectFrom('webhook_attempts').selectAll().execute()).toStrictEqual([])
    })

    it('keeps the first body rendered for an event', async () => {
      await oneDue()
      const [claim] = await storage().webhooks.claimDue(Date.now() + 1000, CLAIM)
      expect(await storage().webhooks.keepPayload(claim!.event.eventId, '{"first":1}')).toBe('{"first":1}')
      expect(await storage().webhooks.keepPayload(claim!.event.eventId, '{"second":2}')).toBe('{"first":1}')
    })

    it('keeps the bodies asked together in one batch, the first of an event asked twice staying', async () => {
      await oneDue()
      await storeJob(storage(), shop.accountId, shop.printerOf.online)
      const [a, b] = await storage().webhooks.claimDue(Date.now() + 1000, CLAIM)
      const kept = await Promise.all([
        storage().webhooks.keepPayload(a!.event.eventId, '{"a":1}'),
        storage().webhooks.keepPayload(b!.event.eventId, '{"b":1}'),
        storage().webhooks.keepPayload(a!.event.eventId, '{"a":2}'),
      ])
      expect(kept).toStrictEqual(['{"a":1}', '{"b":1}', '{"a":1}'])
      const stored = new Map((await events()).map((e) => [e.event_id, e.payload]))
      expect(stored.get(a!.event.eventId)).toBe('{"a":1}')
      expect(stored.get(b!.event.eventId)).toBe('{"b":1}')
    })
  })
})
