import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { ProvisionedManagedAccount } from '../../../protocol/partner.ts'
import { expectInjectedError, field, ISO_DATE_TIME, UUID } from '../api/api-helpers.ts'
import { startTestCloud, type TestCloud } from '../test-cloud.ts'
import { type Partner, RETURN_URI, registerPartner } from './partner-helpers.ts'

describe('partner management: agent enrollments', () => {
  let cloud: TestCloud
  let partner: Partner
  let rival: Partner
  let shop: ProvisionedManagedAccount
  let url: string

  beforeAll(async () => {
    cloud = await startTestCloud()
    partner = await registerPartner(cloud)
    rival = await registerPartner(cloud, true, 'Rival')
    shop = await partner.provision('enrollments-shop')
    url = `/partner-api/v1/accounts/${shop.relationship_id}/agent-enrollments`
  })
  afterAll(() => cloud?.close())

  const request = (name = 'Back office hub') => ({
    name,
    agent_onboarding: { return_uri: RETURN_URI, state: randomUUID() },
  })

  it('issues an enrollment; an identical retry returns the original secret; another request with the key is a 409', async () => {
    const payload = request()
    const res = await partner.request('POST', url, { payload, idempotencyKey: 'enroll-1' })
    expect(res.statusCode, res.body).toBe(201)
    expect(res.headers['cache-control']).toBe('private, no-store')
    const issued = res.json()
    expect(issued).toStrictEqual({
      enrollment_id: expect.stringMatching(UUID),
      relationship_id: shop.relationship_id,
      name: 'Back office hub',
      state: 'pending',
      created_at: expect.stringMatching(ISO_DATE_TIME),
      expires_at: expect.stringMatching(ISO_DATE_TIME),
      claimed_at: null,
      revoked_at: null,
      agent_id: null,
      enrollment_token: expect.stringMatching(/^enr_/),
      onboarding_url: expect.stringMatching(
        /^http:\/\/127\.0\.0\.1:8080\/onboarding\/onb_[A-Za-z0-9_-]{43}$/,
      ),
    })
    // Expires after ENROLLMENT_TTL_HOURS (the two times are read from the clock a moment apart).
    const lifetimeMs = Date.parse(issued.expires_at) - Date.parse(issued.created_at)
    expect(lifetimeMs).toBeLessThanOrEqual(cloud.config.enrollmentTtlHours * 3600_000)
    expect(lifetimeMs).toBeGreaterThan(cloud.config.enrollmentTtlHours * 3600_000 - 1000)

    const replay = await partner.request('POST', url, { payload, idempotencyKey: 'enroll-1' })
    expect(replay.statusCode).toBe(201)
    expect(replay.headers['idempotent-replayed']).toBe('true')
    expect(replay.headers['cache-control']).toBe('private, no-store')
    expect(replay.json()).toStrictEqual(issued)
    expectInjectedError(
      await partner.request('POST', url, { payload: request('Other'), idempotencyKey: 'enroll-1' }),
      'idempotency_key_conflict',
    )
    // The same key and body for another account is another request.
    const other = await partner.provision()
    const elsewhere = await partner.request(
      'POST',
      `/partner-api/v1/accounts/${other.relationship_id}/agent-enrollments`,
      {
        payload,
        idempotencyKey: 'enroll-1',
      },
    )
    expect(elsewhere.statusCode).toBe(409)

    // The enrollment token enrolls a hub, once; the enrollment then shows it claimed.
    const enroll = await cloud.app.inject({
      method: 'POST',
      url: '/agent-api/v1/enroll',
      payload: { token: issued.enrollment_token, hostname: 'pi', agent_version: '1.0.0' },
    })
    expect(enroll.statusCode, enroll.body).toBe(201)
    expect(enroll.json().account_id).toBe(shop.account_id)
    const got = await partner.request('GET', `${url}/${issued.enrollment_id}`)
    expect(got.statusCode).toBe(200)
    const { enrollment_token: _token, onboarding_url: _url, ...view } = issued
    expect(got.json()).toStrictEqual({
      ...view,
      state: 'claimed',
      claimed_at: expect.stringMatching(ISO_DATE_TIME),
      agent_id: enroll.json().agent_id,
    })
    expect(got.body).not.toContain(issued.enrollment_token)
  })

  it('requires the Idempotency-Key', async () => {
    expectInjectedError(await partner.request('POST', url, { payload: request() }), 'validation_failed', {
      fields: [field('idempotency-key', 'headers')],
    })
  })

  it('revokes the enrollment it replaces; an unknown or foreign one is a 404', async () => {
    const first = (
      await partner.request('POST', url, { payload: request(), idempotencyKey: randomUUID() })
    ).json()
    const second = await partner.request('POST', url, {
      payload: { ...request(), replaces_enrollment_id: first.enrollment_id },
      idempotencyKey: randomUUID(),
    })
    expect(second.statusCode, second.body).toBe(201)
    expect((await partner.request('GET', `${url}/${first.enrollment_id}`)).json()).toMatchObject({
      state: 'revoked',
      revoked_at: expect.stringMatching(ISO_DATE_TIME),
    })
    const enroll = await cloud.app.inject({
      method: 'POST',
      url: '/agent-api/v1/enroll',
      payload: { token: first.enrollment_token, hostname: 'pi', agent_version: '1.0.0' },
    })
    expectInjectedError(enroll, 'enrollment_revoked')
    {
      const replaced = randomUUID()
      expectInjectedError(
        await partner.request('POST', url, {
          payload: { ...request(), replaces_enrollment_id: replaced },
          idempotencyKey: randomUUID(),
        }),
        'agent_enrollment_not_found',
      )
    }
    // An enrollment of another account of the same partner is not this account's.
    const other = await partner.provision()
    expectInjectedError(
      await partner.request('POST', url, {
        payload: { ...request(), replaces_enrollment_id: other.agent_enrollment.enrollment_id },
        idempotencyKey: randomUUID(),
      }),
      'agent_enrollment_not_found',
    )
  })

  it('lists pending, claimed, expired and revoked enrollments, newest first, never their secrets', async () => {
    const fresh = await partner.provision()
    const listUrl = `/partner-api/v1/accounts/${fresh.relationship_id}/agent-enrollments`
    const created = []
    for (let i = 0; i < 3; i++) {
      created.push(
        (
          await partner.request('POST', listUrl, {
            payload: request(`hub ${i}`),
            idempotencyKey: randomUUID(),
          })
        ).json(),
      )
    }
    await cloud.storage.enrollments.revoke(created[0].enrollment_id, new Date())
    const page = await partner.request('GET', `${listUrl}?limit=2`)
    expect(page.statusCode).toBe(200)
    const body = page.json()
    expect(body.data.map((e: { enrollment_id: string }) => e.enrollment_id)).toStrictEqual([
      created[2].enrollment_id,
      created[1].enrollment_id,
    ])
    expect(page.body).not.toContain('enr_')
    expect(page.body).not.toContain('onboarding_url')
    const rest = (await partner.request('GET', `${listUrl}?limit=2&cursor=${body.next_cursor}`)).json()
    expect(rest.data.map((e: { state: string }) => e.state)).toStrictEqual(['revoked', 'pending'])
    expect(rest.next_cursor).toBeNull()
    expectInjectedError(await partner.request('GET', `${listUrl}?limit=101`), 'validation_failed', {
      fields: [field('limit', 'querystring')],
    })
  })

  it('shows an enrollment past its expiry as expired', async () => {
    const fresh = await partner.provision()
    const expiring = await cloud.storage.enrollments.create(
      fresh.account_id,
      'Late hub',
      Buffer.alloc(32, 7),
      new Date(Date.now() - 1000),
    )
    const res = await partner.request(
      'GET',
      `/partner-api/v1/accounts/${fresh.relationship_id}/agent-enrollments/${expiring.enrollment_id}`,
    )
    expect(res.json().state).toBe('expired')
  })

  it('answers 404 for an unknown enrollment, an unknown account, and another application', async () => {
    expectInjectedError(await partner.request('GET', `${url}/${randomUUID()}`), 'agent_enrollment_not_found')
    const missing = `/partner-api/v1/accounts/${randomUUID()}/agent-enrollments`
    expectInjectedError(await partner.request('GET', missing), 'managed_account_not_found')
    expectInjectedError(
      await partner.request('POST', missing, { payload: request(), idempotencyKey: randomUUID() }),
      'managed_account_not_found',
    )
    expectInjectedError(await rival.request('GET', url), 'managed_account_not_found')
    expectInjectedError(
      await rival.request('GET', `${url}/${shop.agent_enrollment.enrollment_id}`),
      'managed_account_not_found',
    )
  })

  it('issues no enrollment for a suspended or closed account (422)', async () => {
    const fresh = await partner.provision()
    const freshUrl = `/partner-api/v1/accounts/${fresh.relationship_id}`
    await partner.request('POST', `${freshUrl}/suspend`)
    expectInjectedError(
      await partner.request('POST', `${freshUrl}/agent-enrollments`, {
        payload: request(),
        idempotencyKey: randomUUID(),
      }),
      'account_action_not_allowed',
      { state: 'suspended', action: 'create_agent_enrollment' },
    )
  })
})
