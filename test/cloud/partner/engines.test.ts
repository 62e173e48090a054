import { randomUUID } from 'node:crypto'
import { afterEach, describe, expect, it } from 'vitest'
import { bearer, expectInjectedError } from '../api/api-helpers.ts'
import { assertionSync, registerApplication } from '../developer/applications.ts'
import { storageEngine } from '../storage/engines.ts'
import { startTestCloud, type TestCloud } from '../test-cloud.ts'
import { accountRequest, registerPartner } from './partner-helpers.ts'

/** The partner API on each storage engine, with requests side by side and text PostgreSQL cannot store. */
describe.each(['sqlite', 'postgres'] as const)('the partner API on %s', (engine) => {
  const engineUnderTest = storageEngine(engine)
  const clouds: TestCloud[] = []
  afterEach(async () => {
    for (const cloud of clouds.splice(0)) await cloud.close()
  })
  const start = async () => {
    const { databaseUrl, remove } = await engineUnderTest.freshSettings()
    remove()
    const cloud = await startTestCloud({ env: { ...(databaseUrl && { DATABASE_URL: databaseUrl }) } })
    clouds.push(cloud)
    expect(cloud.storage.engine).toBe(engine)
    return cloud
  }

  it('provisions one account for one customer when two keys race, and replays under each key', async () => {
    const cloud = await start()
    const partner = await registerPartner(cloud)
    const request = accountRequest('racing-tenant')
    const answers = await Promise.all(
      ['key-a', 'key-b', 'key-c', 'key-d'].map((key) =>
        partner.request('POST', '/partner-api/v1/accounts', { payload: request, idempotencyKey: key }),
      ),
    )
    const statuses = answers.map((res) => res.statusCode).sort()
    expect(statuses).toStrictEqual([201, 409, 409, 409])
    const winner = answers.find((res) => res.statusCode === 201)?.json()
    for (const res of answers.filter((r) => r.statusCode === 409)) {
      expectInjectedError(res, 'relationship_conflict', { relationship_id: winner.relationship_id })
    }
    const page = (await partner.request('GET', '/partner-api/v1/accounts')).json()
    expect(page.data.map((a: { relationship_id: string }) => a.relationship_id)).toStrictEqual([
      winner.relationship_id,
    ])
    // The same key at once: one provisions, the other replays it.
    const twice = accountRequest('twice')
    const same = await Promise.all(
      [0, 1].map(() =>
        partner.request('POST', '/partner-api/v1/accounts', {
          payload: twice,
          idempotencyKey: 'same-key',
        }),
      ),
    )
    expect(same.map((res) => res.statusCode).sort()).toStrictEqual([200, 201])
    expect(same[0]?.json()).toStrictEqual(same[1]?.json())
  })

  it('answers text with NUL characters with a 4xx, never a 5xx', async () => {
    const cloud = await start()
    const partner = await registerPartner(cloud)
    const nul = 'a\u0000b'
    const created = await partner.request('POST', '/partner-api/v1/accounts', {
      payload: {
        ...accountRequest(nul, nul),
        agent_onboarding: { return_uri: 'https://x.example/', state: nul },
      },
      idempotencyKey: randomUUID(),
    })
    expectInjectedError(created, 'validation_failed', {
      fields: expect.arrayContaining([expect.objectContaining({ field: 'external_customer_id' })]),
    })
    const listed = await partner.request(
      'GET',
      `/partner-api/v1/accounts?external_customer_id=${encodeURIComponent(nul)}`,
    )
    expect(listed.statusCode).toBe(422)
    // An assertion naming an issuer or key id with a NUL: refused as unknown.
    const app = await registerApplication(cloud.storage, cloud.config.publicUrl, { partner: true })
    for (const forged of [
      { ...app, appId: `${app.appId}\u0000` },
      { ...app, kid: `${app.kid}\u0000` },
    ]) {
      const res = await cloud.app.inject({
        method: 'GET',
        url: '/partner-api/v1/accounts',
        headers: bearer(assertionSync(forged, cloud.config.publicUrl)),
      })
      expectInjectedError(res, 'assertion_invalid')
    }
  })
})

describe('two cloud nodes on one PostgreSQL database', () => {
  const engineUnderTest = storageEngine('postgres')
  const clouds: TestCloud[] = []
  afterEach(async () => {
    for (const cloud of clouds.splice(0)) await cloud.close()
  })

  it('accept an assertion sent to both at once on one of them only', async () => {
    const { databaseUrl, remove } = await engineUnderTest.freshSettings()
    remove()
    for (let i = 0; i < 2; i++) {
      clouds.push(await startTestCloud({ env: { DATABASE_URL: databaseUrl ?? '' } }))
    }
    const [one, two] = clouds as [TestCloud, TestCloud]
    const app = await registerApplication(one.storage, one.config.publicUrl, { partner: true })
    for (let round = 0; round < 10; round++) {
      const assertion = assertionSync(app, one.config.publicUrl)
      const answers = await Promise.all(
        [one, two].map((cloud) =>
          cloud.app.inject({ method: 'GET', url: '/partner-api/v1/accounts', headers: bearer(assertion) }),
        ),
      )
      expect(answers.map((res) => res.statusCode).sort()).toStrictEqual([200, 401])
      const refused = answers.find((res) => res.statusCode === 401)
      if (refused) expectInjectedError(refused, 'assertion_replayed')
    }
  })
})
