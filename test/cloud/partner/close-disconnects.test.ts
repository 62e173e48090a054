import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { ManagedAccount, ProvisionedManagedAccount } from '../../../protocol/partner.ts'
import { registerApplication, type TestApplication } from '../developer/applications.ts'
import { connectHub, enroll, startFullCloud } from '../hub-link.ts'
import { RETURN_URI } from './partner-helpers.ts'

type FullCloud = Awaited<ReturnType<typeof startFullCloud>>

describe('closing a managed account, over real HTTP and MQTT', () => {
  let full: FullCloud
  let partner: TestApplication

  beforeAll(async () => {
    full = await startFullCloud()
    partner = await registerApplication(full.cloud.storage, full.url, { partner: true })
  })
  afterAll(() => full?.close())

  const call = async <T>(method: string, path: string, body?: unknown, idempotencyKey?: string) => {
    const res = await fetch(`${full.url}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${await partner.assertion()}`,
        ...(body !== undefined && { 'content-type': 'application/json' }),
        ...(idempotencyKey !== undefined && { 'idempotency-key': idempotencyKey }),
      },
      ...(body !== undefined && { body: JSON.stringify(body) }),
    })
    return { status: res.status, body: (await res.json()) as T }
  }

  it('disconnects its hub and refuses the hub from then on', async () => {
    const created = await call<ProvisionedManagedAccount>(
      'POST',
      '/partner-api/v1/accounts',
      {
        external_customer_id: 'closing-shop',
        name: 'Closing shop',
        permissions: ['printers:read'],
        agent_onboarding: { return_uri: RETURN_URI, state: randomUUID() },
      },
      randomUUID(),
    )
    expect(created.status).toBe(201)
    // The hub enrolls with the enrollment token the partner received, and connects.
    const hub = await enroll(full.url, created.body.agent_enrollment.enrollment_token)
    expect(hub.account_id).toBe(created.body.account_id)
    const client = await connectHub(full.mqttUrl, {
      clientId: hub.agent_id,
      username: hub.agent_id,
      password: hub.credential,
    })
    const closedConnection = new Promise<void>((resolve) => client.once('close', () => resolve()))

    const closed = await call<ManagedAccount>(
      'POST',
      `/partner-api/v1/accounts/${created.body.relationship_id}/close`,
    )
    expect(closed.status).toBe(200)
    expect(closed.body.state).toBe('closed')
    await closedConnection
    client.end(true)
    await expect(
      connectHub(full.mqttUrl, { clientId: hub.agent_id, username: hub.agent_id, password: hub.credential }),
    ).rejects.toThrow()
    const connection = await fetch(`${full.url}/agent-api/v1/connection`, {
      headers: { authorization: `Bearer ${hub.credential}` },
    })
    expect(connection.status).toBe(401)
  }, 30_000)
})
