import { afterEach, describe, expect, it } from 'vitest'
import { CloudClient } from '../../../hub/cloud/cloud-client.ts'
import { LanCredentials } from '../../../hub/lan/lan-credentials.ts'
import { generateSecret, hashSecret } from '../../../print-api/secrets.ts'
import { listen } from '../../cloud/api/api-helpers.ts'
import { ALL_SCOPES, startTestCloud, type TestCloud } from '../../cloud/test-cloud.ts'
import { tempDir } from '../../helpers/temp-dir.ts'

// End to end over HTTP, in one process: a hub enrolled with a real cloud fetches its lan-credentials document
// with its own credential, then checks what that cloud's POST /oauth/token issued without asking the cloud.

let cloud: TestCloud | undefined
const dirs: { remove(): void }[] = []
afterEach(async () => {
  await cloud?.close()
  cloud = undefined
  for (const dir of dirs.splice(0)) dir.remove()
})

async function cloudToken(base: string, clientId: string, clientSecret: string, scope: string) {
  const res = await fetch(`${base}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'client_credentials',
      client_id: clientId,
      client_secret: clientSecret,
      scope,
    }).toString(),
  })
  expect(res.status).toBe(200)
  return ((await res.json()) as { access_token: string }).access_token
}

/** A hub enrolled over HTTP as `hub run --enroll` does, with its LanCredentials in a fresh directory. */
async function enrolledHub(test: TestCloud, base: string, accountId: string) {
  const enrollmentToken = generateSecret('enr')
  await test.storage.enrollments.create(
    accountId,
    'Front desk',
    hashSecret(enrollmentToken),
    new Date(Date.now() + 3600_000),
  )
  const client = new CloudClient(base)
  const enrolled = await client.enroll(enrollmentToken, 'pi', '1.0.0')
  client.setCredential(enrolled.credential)
  // Off unless enabled for the hub: a hub it is not enabled for gets no client at all.
  await test.storage.agents.setLanApi(accountId, enrolled.agent_id, true, new Date().toISOString())
  const dir = tempDir('lan-e2e-')
  dirs.push(dir)
  const lan = new LanCredentials({
    dataDir: dir.path,
    agentId: enrolled.agent_id,
    accountId: enrolled.account_id,
  })
  return { client, lan }
}

describe('a hub checks the cloud’s credentials offline', () => {
  it('with the document it fetched from the cloud it enrolled with', async () => {
    cloud = await startTestCloud()
    const base = await listen(cloud.app)
    const shop = await cloud.createAccount()
    const { client, lan } = await enrolledHub(cloud, base, shop.accountId)

    await lan.refresh(() => client.lanCredentials())
    const token = await cloudToken(base, shop.clientId, shop.clientSecret, 'print_jobs:write printers:read')
    // The cloud is gone: the hub checks on its own.
    await cloud.close()
    cloud = undefined
    expect(await lan.verifyBearer(token, Date.now())).toStrictEqual({
      clientId: shop.clientId,
      scopes: ['print_jobs:write', 'printers:read'],
    })
    const grant = await lan.issueToken(shop.clientId, shop.clientSecret, undefined, Date.now())
    expect(grant).toMatchObject({ token_type: 'Bearer', expires_in: 3600, scope: ALL_SCOPES.join(' ') })
    if (!('access_token' in grant)) throw new Error('refused')
    expect(await lan.verifyBearer(grant.access_token, Date.now())).toStrictEqual({
      clientId: shop.clientId,
      scopes: ALL_SCOPES,
    })
    expect(await lan.issueToken(shop.clientId, 'cs_wrong', undefined, Date.now())).toStrictEqual({
      refused: 'invalid_client',
    })
  })

  it('and refuses a client revoked before its next fetch', async () => {
    cloud = await startTestCloud()
    const base = await listen(cloud.app)
    const shop = await cloud.createAccount()
    const { client, lan } = await enrolledHub(cloud, base, shop.accountId)
    await lan.refresh(() => client.lanCredentials())
    const token = await cloudToken(base, shop.clientId, shop.clientSecret, 'printers:read')
    expect(await lan.verifyBearer(token, Date.now())).toMatchObject({ clientId: shop.clientId })
    await cloud.storage.apiClients.revoke(shop.clientId, new Date())
    await lan.refresh(() => client.lanCredentials())
    expect(await lan.verifyBearer(token, Date.now())).toStrictEqual({ refused: 'unknown_client' })
  })
})
