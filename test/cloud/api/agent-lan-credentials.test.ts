import { createHash } from 'node:crypto'
import { afterEach, describe, expect, it } from 'vitest'
import { generateSecret, hashSecret } from '../../../print-api/secrets.ts'
import type { Scope } from '../../../protocol/enums.ts'
import type { LanCredentialsDocument } from '../../../protocol/lan-credentials.ts'
import { storageEngine } from '../storage/engines.ts'
import { ALL_SCOPES, RECEIPT_PRINTER, startTestCloud, type TestCloud } from '../test-cloud.ts'
import { bearer, expectInjectedError, ISO_DATE_TIME } from './api-helpers.ts'

// GET /agent-api/v1/lan-credentials: what a hub checks its account's API credentials with while offline.

const URL = '/agent-api/v1/lan-credentials'

/** A hub of `accountId` enrolled as the enroll route does it, its LAN API enabled unless told; its credential. */
async function enrolledHub(cloud: TestCloud, accountId: string, lanApi = true): Promise<string> {
  return (await enrolledHubWithId(cloud, accountId, lanApi)).credential
}

async function enrolledHubWithId(cloud: TestCloud, accountId: string, lanApi: boolean) {
  const credential = generateSecret('hub')
  const token = generateSecret('enr')
  await cloud.storage.enrollments.create(accountId, 'Hub', hashSecret(token), new Date(Date.now() + 3600_000))
  const claimed = await cloud.storage.enrollments.claim(
    hashSecret(token),
    hashSecret(credential),
    'pi',
    new Date(),
  )
  if (claimed.outcome !== 'claimed') throw new Error(`claim: ${claimed.outcome}`)
  if (lanApi) await cloud.storage.agents.setLanApi(accountId, claimed.agentId, true, new Date().toISOString())
  return { credential, agentId: claimed.agentId }
}

/** An API client of the account, made as the console makes them; its id and secret. */
async function apiClient(cloud: TestCloud, accountId: string, scopes: Scope[]) {
  const secret = generateSecret('cs')
  const client = await cloud.storage.apiClients.create(accountId, hashSecret(secret), scopes)
  return { clientId: client.client_id, secret }
}

const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex')
const byId = (a: { client_id: string }, b: { client_id: string }) => a.client_id.localeCompare(b.client_id)

describe.each(['sqlite', 'postgres'] as const)('GET /agent-api/v1/lan-credentials on %s', (engine) => {
  const engineUnderTest = storageEngine(engine)
  const clouds: TestCloud[] = []
  afterEach(async () => {
    for (const cloud of clouds.splice(0)) await cloud.close()
  })
  const start = async () => {
    const { databaseUrl, remove } = await engineUnderTest.freshSettings()
    remove()
    const cloud = await startTestCloud({ env: databaseUrl ? { DATABASE_URL: databaseUrl } : {} })
    clouds.push(cloud)
    expect(cloud.storage.engine).toBe(engine)
    return cloud
  }
  const fetchAs = (cloud: TestCloud, credential: string) =>
    cloud.app.inject({ url: URL, headers: bearer(credential) })

  it("gives the hub its own account's live API clients with their secrets' digests, and the token keys", async () => {
    const cloud = await start()
    const shop = await cloud.createAccount('Shop')
    const till = await apiClient(cloud, shop.accountId, ['print_jobs:write', 'printers:read'])
    const revoked = await apiClient(cloud, shop.accountId, ['printers:read'])
    await cloud.storage.apiClients.revoke(revoked.clientId, new Date())
    const other = await cloud.createAccount('Other shop')
    const hub = await enrolledHub(cloud, shop.accountId)

    const res = await fetchAs(cloud, hub)
    expect(res.statusCode, res.body).toBe(200)
    expect(res.headers['cache-control']).toBe('no-store')
    const body = res.json() as LanCredentialsDocument
    const jwks = (await cloud.app.inject({ url: '/.well-known/jwks.json' })).json()
    expect({ ...body, clients: [...body.clients].sort(byId) }).toStrictEqual({
      lan_api_enabled: true,
      printers: [],
      issuer: 'http://127.0.0.1:8080',
      token_keys: jwks,
      clients: [
        { client_id: shop.clientId, scopes: ALL_SCOPES, secret_sha256: sha256(shop.clientSecret) },
        {
          client_id: till.clientId,
          scopes: ['print_jobs:write', 'printers:read'],
          secret_sha256: sha256(till.secret),
        },
      ].sort(byId),
      access_token_ttl_seconds: 3600,
      generated_at: expect.stringMatching(ISO_DATE_TIME),
    })
    expect(res.body).not.toContain(other.clientId)
    expect(res.body).not.toContain(revoked.clientId)

    // The other account's hub sees that account's client only.
    const otherHub = await enrolledHub(cloud, other.accountId)
    const theirs = (await fetchAs(cloud, otherHub)).json() as LanCredentialsDocument
    expect(theirs.clients).toStrictEqual([
      { client_id: other.clientId, scopes: ALL_SCOPES, secret_sha256: sha256(other.clientSecret) },
    ])
  })

  it('drops a client once it is revoked', async () => {
    const cloud = await start()
    const shop = await cloud.createAccount()
    const hub = await enrolledHub(cloud, shop.accountId)
    const ids = async () =>
      ((await fetchAs(cloud, hub)).json() as LanCredentialsDocument).clients.map((c) => c.client_id)
    expect(await ids()).toStrictEqual([shop.clientId])
    await cloud.storage.apiClients.revoke(shop.clientId, new Date())
    expect(await ids()).toStrictEqual([])
  })

  it("lists the hub's own printers as GET /api/v1/printers shows them, and no other hub's", async () => {
    const cloud = await start()
    const shop = await cloud.createAccount()
    const hub = await enrolledHubWithId(cloud, shop.accountId, true)
    const counter = await cloud.storage.printers.insert({
      account_id: shop.accountId,
      agent_id: hub.agentId,
      name: 'Counter',
      capabilities: RECEIPT_PRINTER,
      reported: true,
    })
    const listed = (
      await cloud.app.inject({ url: '/api/v1/printers', headers: bearer(await shop.token()) })
    ).json() as { data: { printer_id: string }[] }
    expect(listed.data.map((p) => p.printer_id).sort()).toStrictEqual(
      [counter.printer_id, shop.receiptPrinterId, shop.labelPrinterId].sort(),
    )
    const body = (await fetchAs(cloud, hub.credential)).json() as LanCredentialsDocument
    expect(body.printers).toStrictEqual(listed.data.filter((p) => p.printer_id === counter.printer_id))
  })

  it('answers a hub the LAN API is not enabled for (the default) with no client at all', async () => {
    const cloud = await start()
    const shop = await cloud.createAccount()
    const hub = await enrolledHubWithId(cloud, shop.accountId, false)
    const res = await fetchAs(cloud, hub.credential)
    expect(res.statusCode, res.body).toBe(200)
    expect(res.json()).toStrictEqual({
      lan_api_enabled: false,
      printers: [],
      issuer: 'http://127.0.0.1:8080',
      token_keys: (await cloud.app.inject({ url: '/.well-known/jwks.json' })).json(),
      clients: [],
      access_token_ttl_seconds: 3600,
      generated_at: expect.stringMatching(ISO_DATE_TIME),
    })
    expect(res.body).not.toContain(shop.clientId)

    // Enabled, then disabled again.
    const at = new Date().toISOString()
    await cloud.storage.agents.setLanApi(shop.accountId, hub.agentId, true, at)
    expect(((await fetchAs(cloud, hub.credential)).json() as LanCredentialsDocument).clients).toHaveLength(1)
    await cloud.storage.agents.setLanApi(shop.accountId, hub.agentId, false, at)
    const disabled = (await fetchAs(cloud, hub.credential)).json() as LanCredentialsDocument
    expect([disabled.lan_api_enabled, disabled.clients]).toStrictEqual([false, []])
  })

  it('refuses a request without the hub credential, with a wrong one, or with an API token (401)', async () => {
    const cloud = await start()
    const shop = await cloud.createAccount()
    await enrolledHub(cloud, shop.accountId)
    expectInjectedError(await cloud.app.inject({ url: URL }), 'hub_credential_invalid')
    expectInjectedError(await fetchAs(cloud, generateSecret('hub')), 'hub_credential_invalid')
    expectInjectedError(await fetchAs(cloud, await shop.token()), 'hub_credential_invalid')
  })
})
