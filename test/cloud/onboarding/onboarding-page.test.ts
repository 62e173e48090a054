import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { hashSecret } from '../../../print-api/secrets.ts'
import type { ProvisionedManagedAccount } from '../../../protocol/partner.ts'
import { UUID } from '../api/api-helpers.ts'
import { accountRequest, type Partner, RETURN_URI, registerPartner } from '../partner/partner-helpers.ts'
import { startTestCloud, type TestCloud } from '../test-cloud.ts'

const pathOf = (shop: ProvisionedManagedAccount) => new URL(shop.agent_enrollment.onboarding_url).pathname

describe('the hosted onboarding page', () => {
  let cloud: TestCloud
  let partner: Partner

  beforeAll(async () => {
    cloud = await startTestCloud({
      env: { TOKEN_FAILURES_PER_CLIENT: '1000', TOKEN_FAILURES_PER_IP: '1000' },
    })
    partner = await registerPartner(cloud)
  })
  afterAll(() => cloud?.close())

  const open = (path: string) => cloud.app.inject({ method: 'GET', url: path })
  const submit = (path: string, code: string) =>
    cloud.app.inject({
      method: 'POST',
      url: path,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({ code }).toString(),
    })
  /** A managed account provisioned with an onboarding state of our own. */
  const provision = async () => {
    const payload = accountRequest(randomUUID())
    const res = await partner.request('POST', '/partner-api/v1/accounts', {
      payload,
      idempotencyKey: randomUUID(),
    })
    expect(res.statusCode, res.body).toBe(201)
    return { shop: res.json() as ProvisionedManagedAccount, state: payload.agent_onboarding.state }
  }
  const askForPairing = async () => {
    const res = await cloud.app.inject({
      method: 'POST',
      url: '/agent-api/v1/pairings',
      payload: { hostname: 'pi-hub', agent_version: '1.0.0' },
    })
    expect(res.statusCode, res.body).toBe(201)
    return res.json() as { device_code: string; user_code: string }
  }
  const stateOf = async (shop: ProvisionedManagedAccount) =>
    (
      await partner.request(
        'GET',
        `/partner-api/v1/accounts/${shop.relationship_id}/agent-enrollments/${shop.agent_enrollment.enrollment_id}`,
      )
    ).json().state

  function expectPageHeaders(headers: Record<string, unknown>, formAction: string) {
    expect(headers['content-type']).toBe('text/html; charset=utf-8')
    expect(headers['content-security-policy']).toMatch(
      new RegExp(
        `^default-src 'none'; style-src 'sha256-[A-Za-z0-9+/]{43}='; form-action ${formAction}; frame-ancestors 'none'; base-uri 'none'$`,
      ),
    )
    expect(headers['x-frame-options']).toBe('DENY')
    expect(headers['referrer-policy']).toBe('no-referrer')
    expect(headers['cache-control']).toBe('no-store')
  }

  it('shows what to do and a labelled code input, with strict security headers and no script', async () => {
    const shop = await partner.provision()
    const res = await open(pathOf(shop))
    expect(res.statusCode).toBe(200)
    expectPageHeaders(res.headers, "'self' https://pos.example")
    expect(res.body).toContain('<html lang="en">')
    expect(res.body).toContain('<meta name="viewport" content="width=device-width, initial-scale=1">')
    expect(res.body).toContain('<label for="code">Pairing code</label>')
    expect(res.body).toMatch(/<input id="code" name="code" [^>]*aria-describedby="code-hint"[^>]*>/)
    expect(res.body).toContain('<form method="post">')
    expect(res.body).not.toMatch(/<script|javascript:|\son\w+=/i)
    // The style the CSP hash allows is the page's one inline style.
    const style = /<style>([\s\S]*)<\/style>/.exec(res.body)?.[1] ?? ''
    const { createHash } = await import('node:crypto')
    expect(res.headers['content-security-policy']).toContain(
      `'sha256-${createHash('sha256').update(style).digest('base64')}'`,
    )
  })

  it('pairs the hub whose code is typed (any case, without the dash), redirects with state, and is spent', async () => {
    const { shop, state } = await provision()
    const { device_code, user_code } = await askForPairing()
    const res = await submit(pathOf(shop), user_code.replace('-', ' ').toLowerCase())
    expect(res.statusCode, res.body).toBe(303)
    expect(res.headers['referrer-policy']).toBe('no-referrer')
    const location = new URL(String(res.headers.location))
    expect(`${location.origin}${location.pathname}`).toBe(RETURN_URI)
    const agentId = location.searchParams.get('agent_id')
    expect([...location.searchParams.keys()]).toStrictEqual(['state', 'result', 'agent_id'])
    expect(location.searchParams.get('state')).toBe(state)
    expect(location.searchParams.get('result')).toBe('paired')
    expect(agentId).toMatch(UUID)
    expect(await stateOf(shop)).toBe('claimed')

    // The hub's next poll gets its credential for that agent.
    const poll = await cloud.app.inject({
      method: 'POST',
      url: '/agent-api/v1/pairings/token',
      payload: { device_code },
    })
    expect(poll.statusCode, poll.body).toBe(200)
    expect(poll.json()).toMatchObject({ agent_id: agentId, account_id: shop.account_id })

    // The link is used: a clear 410 page, never a second pairing (another hub's code included).
    const again = await open(pathOf(shop))
    expect(again.statusCode).toBe(410)
    expectPageHeaders(again.headers, "'self'")
    expect(again.body).toContain('<h1>This link was already used</h1>')
    const other = await askForPairing()
    expect((await submit(pathOf(shop), other.user_code)).statusCode).toBe(410)
  })

  it('re-shows the form with an accessible error for a wrong code, and spends the link after 10', async () => {
    const { shop, state } = await provision()
    const { user_code } = await askForPairing()
    const wrong = user_code === 'BBBB-BBBB' ? 'CCCC-CCCC' : 'BBBB-BBBB'
    const res = await submit(pathOf(shop), wrong)
    expect(res.statusCode).toBe(422)
    expectPageHeaders(res.headers, "'self' https://pos.example")
    expect(res.body).toMatch(
      /<input id="code"[^>]*aria-describedby="code-hint code-error" aria-invalid="true"/,
    )
    expect(res.body).toContain('<p id="code-error" class="error" role="alert">That code is not right')
    expect(res.body).toContain('value="BBBB-BBBB"'.replace('BBBB-BBBB', wrong))
    // A malformed code is explained and not counted.
    const malformed = await submit(pathOf(shop), 'AEIOU')
    expect(malformed.statusCode).toBe(422)
    expect(malformed.body).toContain('A pairing code is 8 letters')

    for (let attempt = 2; attempt < 10; attempt++)
      expect((await submit(pathOf(shop), wrong)).statusCode).toBe(422)
    const last = await submit(pathOf(shop), wrong)
    expect(last.statusCode).toBe(303)
    const location = new URL(String(last.headers.location))
    expect(location.searchParams.get('result')).toBe('too_many_attempts')
    expect(location.searchParams.get('state')).toBe(state)
    // The right code no longer pairs.
    expect((await submit(pathOf(shop), user_code)).statusCode).toBe(410)
    expect(await stateOf(shop)).toBe('pending')
  })

  it('answers an unknown link with 404 and an expired one with 410, as pages', async () => {
    const unknown = await open('/onboarding/onb_unknown')
    expect(unknown.statusCode).toBe(404)
    expectPageHeaders(unknown.headers, "'self'")
    expect(unknown.body).toContain('<h1>Link not found</h1>')
    expect((await submit('/onboarding/onb_unknown', 'BCDF-GHJK')).statusCode).toBe(404)

    const account = await cloud.storage.accounts.create('Shop')
    await cloud.storage.enrollments.create(
      account.account_id,
      'Hub',
      hashSecret('enr'),
      new Date(Date.now() - 1),
      {
        hash: hashSecret('onb_expired'),
        returnUri: RETURN_URI,
        state: 's',
      },
    )
    const expired = await open('/onboarding/onb_expired')
    expect(expired.statusCode).toBe(410)
    expect(expired.body).toContain('<h1>This link has expired</h1>')
  })
})

describe('wrong onboarding codes per address', () => {
  let cloud: TestCloud
  beforeAll(async () => {
    cloud = await startTestCloud({ env: { TOKEN_FAILURES_PER_CLIENT: '3' } })
  })
  afterAll(() => cloud?.close())

  it('answers a fourth wrong code from one address on one link with a 429 page and Retry-After', async () => {
    const shop = await (await registerPartner(cloud)).provision()
    const submit = () =>
      cloud.app.inject({
        method: 'POST',
        url: pathOf(shop),
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: 'code=BBBB-BBBB',
      })
    for (let i = 0; i < 3; i++) expect((await submit()).statusCode).toBe(422)
    const refused = await submit()
    expect(refused.statusCode).toBe(429)
    expect(refused.headers['content-type']).toBe('text/html; charset=utf-8')
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0)
    expect(refused.body).toContain('<h1>Too many attempts</h1>')
  })
})
