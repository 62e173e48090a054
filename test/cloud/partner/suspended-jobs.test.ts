import { randomUUID } from 'node:crypto'
import { pino } from 'pino'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { HubBus } from '../../../cloud/broker/hub-bus.ts'
import { Dispatcher } from '../../../cloud/dispatch/dispatcher.ts'
import { HubPresence } from '../../../cloud/presence/hub-presence.ts'
import { bearer, expectInjectedError } from '../api/api-helpers.ts'
import { ESCPOS_RECEIPT, RECEIPT_PRINTER, startTestCloud, type TestCloud } from '../test-cloud.ts'
import { type Partner, RETURN_URI, registerPartner } from './partner-helpers.ts'

type Handler = (agentId: string, payload: unknown) => Promise<void>

/** A bus that records what the cloud publishes and hands a test the handlers of what hubs publish. */
function recordingBus() {
  const published: { agentId: string; topic: string; payload: Record<string, unknown> }[] = []
  const handlers = new Map<string, Handler>()
  const bus: HubBus = {
    async publish(agentId, topic, payload) {
      published.push({ agentId, topic, payload: payload as Record<string, unknown> })
    },
    async subscribe(topic, handler) {
      handlers.set(topic, handler as Handler)
    },
  }
  return { bus, published, handlers }
}

describe('a suspended account holds its jobs (issue 10 point 4)', () => {
  let cloud: TestCloud
  let partner: Partner
  let dispatcher: Dispatcher
  let hubPresence: HubPresence
  const recorded = recordingBus()

  beforeAll(async () => {
    cloud = await startTestCloud({
      jobEvents: {
        offersNewJobs: true,
        jobCreated: (job) => dispatcher.jobCreated(job),
        cancelRequested: (id) => dispatcher.cancelRequested(id),
      },
    })
    dispatcher = new Dispatcher({
      storage: cloud.storage,
      bus: recorded.bus,
      logger: pino({ level: 'silent' }),
      publicUrl: cloud.config.publicUrl,
      pendingExpirySeconds: 3600,
      cancelConfirmTimeoutMs: 100,
    })
    hubPresence = new HubPresence({
      storage: cloud.storage,
      bus: recorded.bus,
      logger: pino({ level: 'silent' }),
      hubOnline: (agentId) => dispatcher.hubOnline(agentId),
    })
    await hubPresence.start()
    await dispatcher.start()
    partner = await registerPartner(cloud)
  })
  afterAll(async () => {
    await hubPresence?.stop()
    await dispatcher?.stop()
    await cloud?.close()
  })

  it('offers none of its jobs to its hub while suspended, and offers them once it is resumed', async () => {
    const created = await partner.request('POST', '/partner-api/v1/accounts', {
      payload: {
        external_customer_id: randomUUID(),
        name: 'Night shop',
        permissions: ['documents:write', 'print_jobs:write', 'print_jobs:read'],
        agent_onboarding: { return_uri: RETURN_URI, state: 's' },
      },
      idempotencyKey: randomUUID(),
    })
    expect(created.statusCode, created.body).toBe(201)
    const shop = created.json()
    const hub = await cloud.storage.agents.insert({ account_id: shop.account_id, name: 'Hub' })
    const printer = await cloud.storage.printers.insert({
      account_id: shop.account_id,
      agent_id: hub.agent_id,
      name: 'Receipts',
      capabilities: RECEIPT_PRINTER,
      reported: true,
    })
    const token = (
      await partner.request(
        'POST',
        `/developer-api/v1/app-installations/${shop.installation_id}/access-tokens`,
      )
    ).json().access_token as string
    // The hub is offline: the job waits, not offered yet.
    const job = await cloud.app.inject({
      method: 'POST',
      url: '/api/v1/print-jobs/from-base64',
      headers: bearer(token),
      payload: {
        document_base64: ESCPOS_RECEIPT.toString('base64'),
        document_format: 'raw',
        document_raw_language: 'escpos',
        printer_id: printer.printer_id,
      },
    })
    expect(job.statusCode, job.body).toBe(201)
    const jobId = job.json().print_job_id as string
    const offers = () =>
      recorded.published.filter((m) => m.topic === 'job-offer' && m.payload.print_job_id === jobId)
    expect(offers()).toHaveLength(0)

    const url = `/partner-api/v1/accounts/${shop.relationship_id}`
    expect((await partner.request('POST', `${url}/suspend`)).json().state).toBe('suspended')
    const presence = recorded.handlers.get('presence')
    if (!presence) throw new Error('the presence room did not subscribe to presence')
    await presence(hub.agent_id, { v: 1, online: true, session: 'first' })
    expect((await cloud.storage.agents.findById(hub.agent_id))?.online).toBe(true)
    expect(offers()).toHaveLength(0)
    // Nor does the sweep of jobs never offered take it.
    const cutoff = new Date(Date.now() + 60_000).toISOString()
    expect(
      (await cloud.storage.printJobs.unofferedToOnlineHubs(cutoff, 100)).map((j) => j.print_job_id),
    ).not.toContain(jobId)
    // No new job meanwhile: the installation token is refused.
    expectInjectedError(
      await cloud.app.inject({ method: 'GET', url: `/api/v1/print-jobs/${jobId}`, headers: bearer(token) }),
      'invalid_token',
    )

    expect((await partner.request('POST', `${url}/resume`)).json().state).toBe('active')
    expect(
      (await cloud.storage.printJobs.unofferedToOnlineHubs(cutoff, 100)).map((j) => j.print_job_id),
    ).toContain(jobId)
    await presence(hub.agent_id, { v: 1, online: true, session: 'second' })
    expect(offers()).toHaveLength(1)
    expect(offers()[0]?.agentId).toBe(hub.agent_id)
  })
})
