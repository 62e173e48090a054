import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openDatabase } from '../../../cloud/storage/database.ts'
import { databaseLocation } from '../../../cloud/storage/storage.ts'
import { hashSecret } from '../../../print-api/secrets.ts'
import type { ProvisionedManagedAccount } from '../../../protocol/partner.ts'
import { expectInjectedError, UUID } from '../api/api-helpers.ts'
import { registerPartner } from '../partner/partner-helpers.ts'
import { startTestCloud, type TestCloud } from '../test-cloud.ts'

const USER_CODE = /^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$/

/** The onboarding link's token hash, as the hosted page finds its enrollment. */
const linkHash = (shop: ProvisionedManagedAccount) =>
  hashSecret(new URL(shop.agent_enrollment.onboarding_url).pathname.split('/').pop() ?? '')

describe('hub pairing (RFC 8628 style) on the agent API', () => {
  let cloud: TestCloud
  let shop: ProvisionedManagedAccount

  beforeAll(async () => {
    cloud = await startTestCloud({
      env: { TOKEN_FAILURES_PER_CLIENT: '1000', TOKEN_FAILURES_PER_IP: '1000' },
    })
    shop = await (await registerPartner(cloud)).provision('pairing-shop')
  })
  afterAll(() => cloud?.close())

  const askForPairing = (remoteAddress = '127.0.0.1') =>
    cloud.app.inject({
      method: 'POST',
      url: '/agent-api/v1/pairings',
      remoteAddress,
      payload: { hostname: 'pi-hub', agent_version: '1.0.0' },
    })
  const poll = (deviceCode: string) =>
    cloud.app.inject({
      method: 'POST',
      url: '/agent-api/v1/pairings/token',
      payload: { device_code: deviceCode },
    })

  it('gives a device code, a short user code, the lifetime and the interval, not cacheable', async () => {
    const res = await askForPairing()
    expect(res.statusCode, res.body).toBe(201)
    expect(res.headers['cache-control']).toBe('no-store')
    expect(res.json()).toStrictEqual({
      device_code: expect.stringMatching(/^dvc_[A-Za-z0-9_-]{43}$/),
      user_code: expect.stringMatching(USER_CODE),
      expires_in: 600,
      interval: 5,
    })
  })

  it('answers authorization_pending, then slow_down when polled sooner than the interval, then the credential once paired', async () => {
    const { device_code, user_code } = (await askForPairing()).json()
    expectInjectedError(await poll(device_code), 'authorization_pending')
    expectInjectedError(await poll(device_code), 'slow_down', { interval: 10 })

    // The code as stored: without its dash (routes/onboarding.ts normalizes what the installer types).
    const typed = user_code.replace('-', '')
    const paired = await cloud.storage.pairings.pair(linkHash(shop), hashSecret(typed), new Date(), 10)
    expect(paired.outcome).toBe('paired')

    const res = await poll(device_code)
    expect(res.statusCode, res.body).toBe(200)
    expect(res.headers['cache-control']).toBe('no-store')
    const identity = res.json()
    expect(identity).toStrictEqual({
      agent_id: expect.stringMatching(UUID),
      account_id: shop.account_id,
      name: shop.agent_enrollment.name,
      credential: expect.stringMatching(/^hub_/),
      mqtt_url: expect.stringMatching(/^mqtt:\/\//),
    })
    // The credential is the hub's: it authenticates on the agent API.
    const connection = await cloud.app.inject({
      method: 'GET',
      url: '/agent-api/v1/connection',
      headers: { authorization: `Bearer ${identity.credential}` },
    })
    expect(connection.statusCode, connection.body).toBe(200)
    // Handed out once only.
    expectInjectedError(await poll(device_code), 'pairing_device_code_invalid')
  })

  it('answers expired_token once the codes expired unpaired', async () => {
    const { device_code } = (await askForPairing()).json()
    // A second connection to the cloud's SQLite file moves the expiry into the past.
    const database = await openDatabase(databaseLocation({ dataDir: cloud.dataDir }))
    try {
      await database.db
        .updateTable('pairings')
        .set({ expires_at: Date.now() - 1 })
        .where('device_code_hash', '=', hashSecret(device_code))
        .execute()
    } finally {
      await database.db.destroy()
    }
    expectInjectedError(await poll(device_code), 'expired_token')
  })

  it('refuses an unknown device code and malformed requests (400, 422)', async () => {
    expectInjectedError(await poll('dvc_unknown'), 'pairing_device_code_invalid')
    const bad = await cloud.app.inject({
      method: 'POST',
      url: '/agent-api/v1/pairings',
      payload: { hostname: 7 },
    })
    expect(bad.statusCode).toBe(422)
    // A NUL (which PostgreSQL's text cannot hold) is refused before storage.
    const nul = await cloud.app.inject({
      method: 'POST',
      url: '/agent-api/v1/pairings',
      payload: { hostname: 'pi\u0000hub', agent_version: '1.0.0' },
    })
    expect(nul.statusCode, nul.body).toBe(422)
  })
})

describe('hub pairing requests per address', () => {
  let cloud: TestCloud
  beforeAll(async () => {
    cloud = await startTestCloud({ env: { TOKEN_FAILURES_PER_CLIENT: '3' } })
  })
  afterAll(() => cloud?.close())

  it('refuses a fourth pairing from one address in the window (429), not from another address', async () => {
    const ask = (remoteAddress: string) =>
      cloud.app.inject({
        method: 'POST',
        url: '/agent-api/v1/pairings',
        remoteAddress,
        payload: { hostname: 'pi-hub', agent_version: '1.0.0' },
      })
    for (let i = 0; i < 3; i++) expect((await ask('127.0.0.1')).statusCode).toBe(201)
    const refused = await ask('127.0.0.1')
    expect(refused.statusCode, refused.body).toBe(429)
    expect(refused.headers['x-ratelimit-scope']).toBe('client')
    expect((await ask('127.0.0.2')).statusCode).toBe(201)
  })
})
