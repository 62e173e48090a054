import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { generateSecret, hashSecret } from '../../../print-api/secrets.ts'
import { bearer, expectInjectedError, field, ISO_DATE_TIME } from '../api/api-helpers.ts'
import { ALL_SCOPES, issueToken, startTestCloud, type TestCloud } from '../test-cloud.ts'
import { type Partner, registerPartner } from './partner-helpers.ts'

const ACCOUNTS = '/partner-api/v1/accounts'

describe("partner management: a managed account's hubs", () => {
  let cloud: TestCloud
  let partner: Partner
  let rival: Partner

  beforeAll(async () => {
    cloud = await startTestCloud()
    partner = await registerPartner(cloud)
    rival = await registerPartner(cloud, true, 'Shipping platform')
  })
  afterAll(() => cloud?.close())

  /** A managed account of `owner` with one hub, and a bearer token of the account itself. */
  const accountWithHub = async (owner = partner) => {
    const account = await owner.provision()
    const hub = await cloud.storage.agents.insert({ account_id: account.account_id, name: 'Till hub' })
    const client = await cloud.storage.apiClients.create(
      account.account_id,
      hashSecret(generateSecret('cs')),
      ALL_SCOPES,
    )
    const token = await issueToken(cloud.storage, account.account_id, client.client_id)
    return { relationshipId: account.relationship_id, agentId: hub.agent_id, token }
  }
  const listedAgents = async (token: string) =>
    (await cloud.app.inject({ url: '/api/v1/agents', headers: bearer(token) })).json().data

  it('turns the LAN API on and off, answering the hub as GET /api/v1/agents shows it', async () => {
    const { relationshipId, agentId, token } = await accountWithHub()
    const url = `${ACCOUNTS}/${relationshipId}/agents/${agentId}`
    const on = await partner.request('PATCH', url, { payload: { lan_api_enabled: true } })
    expect(on.statusCode, on.body).toBe(200)
    expect(on.json()).toStrictEqual({
      agent_id: agentId,
      name: 'Till hub',
      online: false,
      last_seen_at: null,
      version: null,
      created_at: expect.stringMatching(ISO_DATE_TIME),
      lan_api: { enabled: true, endpoint: null },
    })
    expect(await listedAgents(token)).toStrictEqual([on.json()])
    // Twice is the same.
    const again = await partner.request('PATCH', url, { payload: { lan_api_enabled: true } })
    expect([again.statusCode, again.json()]).toStrictEqual([200, on.json()])

    const off = await partner.request('PATCH', url, { payload: { lan_api_enabled: false } })
    expect(off.statusCode).toBe(200)
    expect(off.json().lan_api).toStrictEqual({ enabled: false, endpoint: null })
    expect(await listedAgents(token)).toStrictEqual([off.json()])
  })

  it("answers 404 for another account's hub, a revoked hub or another application's account", async () => {
    const mine = await accountWithHub()
    const other = await accountWithHub()
    const body = { payload: { lan_api_enabled: true } }
    expectInjectedError(
      await partner.request('PATCH', `${ACCOUNTS}/${mine.relationshipId}/agents/${other.agentId}`, body),
      'agent_not_found',
    )
    expectInjectedError(
      await partner.request('PATCH', `${ACCOUNTS}/${mine.relationshipId}/agents/${randomUUID()}`, body),
      'agent_not_found',
    )
    expectInjectedError(
      await rival.request('PATCH', `${ACCOUNTS}/${mine.relationshipId}/agents/${mine.agentId}`, body),
      'managed_account_not_found',
    )
    await cloud.storage.agents.revoke(mine.agentId, new Date())
    expectInjectedError(
      await partner.request('PATCH', `${ACCOUNTS}/${mine.relationshipId}/agents/${mine.agentId}`, body),
      'agent_not_found',
    )
    expect((await cloud.storage.agents.lanApiOf(other.agentId))?.enabled).toBe(false)
  })

  it('answers 422 for a bad body or id, and 401 without an assertion', async () => {
    const { relationshipId, agentId } = await accountWithHub()
    const url = `${ACCOUNTS}/${relationshipId}/agents/${agentId}`
    expectInjectedError(
      await partner.request('PATCH', url, { payload: { lan_api_enabled: 'yes' } }),
      'validation_failed',
      { fields: [field('lan_api_enabled', 'body')] },
    )
    const extra = await partner.request('PATCH', url, { payload: { lan_api_enabled: true, name: 'x' } })
    expect(extra.statusCode).toBe(422)
    expect(extra.json().error_code).toBe('validation_failed')
    const empty = await partner.request('PATCH', url, { payload: {} })
    expect(empty.statusCode).toBe(422)
    expectInjectedError(
      await partner.request('PATCH', `${ACCOUNTS}/${relationshipId}/agents/nope`, {
        payload: { lan_api_enabled: true },
      }),
      'validation_failed',
      { fields: [field('agentId', 'params')] },
    )
    const anonymous = await cloud.app.inject({ method: 'PATCH', url, payload: { lan_api_enabled: true } })
    expect(anonymous.statusCode).toBe(401)
    expect((await cloud.storage.agents.lanApiOf(agentId))?.enabled).toBe(false)
  })
})
