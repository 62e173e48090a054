import { randomUUID } from 'node:crypto'
import { readFileSync } from 'node:fs'
import path from 'node:path'
import Database from 'better-sqlite3'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { generateSecret, hashSecret } from '../../../print-api/secrets.ts'
import { HealthSummary, type ManagedAccount } from '../../../protocol/partner.ts'
import { bearer, expectInjectedError, field, ISO_DATE_TIME, UUID } from '../api/api-helpers.ts'
import { LABEL_PRINTER, startTestCloud, type TestCloud } from '../test-cloud.ts'
import { accountRequest, type Partner, registerPartner } from './partner-helpers.ts'

const ACCOUNTS = '/partner-api/v1/accounts'

describe('partner management: accounts', () => {
  let cloud: TestCloud
  let partner: Partner
  let rival: Partner

  beforeAll(async () => {
    cloud = await startTestCloud()
    partner = await registerPartner(cloud)
    rival = await registerPartner(cloud, true, 'Shipping platform')
  })
  afterAll(() => cloud?.close())

  describe('create', () => {
    it('provisions an account, its installation and a one-time enrollment with an onboarding URL', async () => {
      const request = accountRequest('tenant-1', 'Corner shop')
      const res = await partner.request('POST', ACCOUNTS, { payload: request, idempotencyKey: 'create-1' })
      expect(res.statusCode, res.body).toBe(201)
      expect(res.headers['cache-control']).toBe('private, no-store')
      const body = res.json()
      expect(body).toStrictEqual({
        relationship_id: expect.stringMatching(UUID),
        account_id: expect.stringMatching(UUID),
        installation_id: expect.stringMatching(UUID),
        external_customer_id: 'tenant-1',
        name: 'Corner shop',
        permissions: ['printers:read', 'print_jobs:read'],
        state: 'active',
        created_at: expect.stringMatching(ISO_DATE_TIME),
        updated_at: expect.stringMatching(ISO_DATE_TIME),
        health: {
          agents: { total: 0, online: 0, offline: 0 },
          printers: { total: 0, online: 0, offline: 0, needs_attention: 0 },
        },
        agent_enrollment: {
          enrollment_id: expect.stringMatching(UUID),
          relationship_id: body.relationship_id,
          name: 'Corner shop',
          state: 'pending',
          created_at: expect.stringMatching(ISO_DATE_TIME),
          expires_at: expect.stringMatching(ISO_DATE_TIME),
          claimed_at: null,
          revoked_at: null,
          agent_id: null,
          enrollment_token: expect.stringMatching(/^enr_[A-Za-z0-9_-]{43}$/),
          onboarding_url: expect.stringMatching(
            /^http:\/\/127\.0\.0\.1:8080\/onboarding\/onb_[A-Za-z0-9_-]{43}$/,
          ),
        },
        onboarding_url: body.agent_enrollment.onboarding_url,
      })
      // The installation is the partner's own, with the requested permissions.
      const installation = await cloud.storage.applications.findInstallation(body.installation_id)
      expect(installation).toMatchObject({ app_id: partner.appId, account_id: body.account_id, active: true })

      // A replay: 200, the same relationship and onboarding URL, marked as replayed, still not cacheable.
      const replay = await partner.request('POST', ACCOUNTS, { payload: request, idempotencyKey: 'create-1' })
      expect(replay.statusCode, replay.body).toBe(200)
      expect(replay.headers['idempotent-replayed']).toBe('true')
      expect(replay.headers['cache-control']).toBe('private, no-store')
      expect(replay.json()).toStrictEqual(body)

      // The same key with another request: 409.
      const other = { ...request, name: 'Another name' }
      expectInjectedError(
        await partner.request('POST', ACCOUNTS, { payload: other, idempotencyKey: 'create-1' }),
        'idempotency_key_conflict',
      )
      // The same customer under another key: 409, naming the relationship.
      expectInjectedError(
        await partner.request('POST', ACCOUNTS, { payload: request, idempotencyKey: 'create-2' }),
        'relationship_conflict',
        { relationship_id: body.relationship_id },
      )
      // Another application may use the same key and the same customer id: its own relationship.
      const theirs = await rival.request('POST', ACCOUNTS, { payload: request, idempotencyKey: 'create-1' })
      expect(theirs.statusCode).toBe(201)
      expect(theirs.json().relationship_id).not.toBe(body.relationship_id)
    })

    it('keeps neither the key nor the secrets of a replay readable in the database', async () => {
      const key = `sealed-${randomUUID()}`
      const res = await partner.request('POST', ACCOUNTS, {
        payload: accountRequest(randomUUID()),
        idempotencyKey: key,
      })
      expect(res.statusCode).toBe(201)
      const { agent_enrollment, onboarding_url } = res.json()
      const db = new Database(path.join(cloud.dataDir, 'cloud.sqlite'), { readonly: true })
      try {
        const rows = db.prepare('SELECT key, response_body FROM idempotency_keys').all() as {
          key: string
          response_body: string
        }[]
        const text = JSON.stringify(rows)
        expect(text).not.toContain(key)
        expect(text).not.toContain(agent_enrollment.enrollment_token)
        expect(text).not.toContain(onboarding_url.split('/').at(-1))
        expect(rows.some((row) => row.response_body?.startsWith('sealed:v1:'))).toBe(true)
      } finally {
        db.close()
      }
    })

    it('requires an Idempotency-Key of 1 to 200 characters', async () => {
      const payload = accountRequest(randomUUID())
      expectInjectedError(await partner.request('POST', ACCOUNTS, { payload }), 'validation_failed', {
        fields: [field('idempotency-key', 'headers')],
      })
      expectInjectedError(
        await partner.request('POST', ACCOUNTS, { payload, idempotencyKey: 'k'.repeat(201) }),
        'validation_failed',
        { fields: [field('idempotency-key', 'headers')] },
      )
      const longest = await partner.request('POST', ACCOUNTS, { payload, idempotencyKey: 'k'.repeat(200) })
      expect(longest.statusCode, longest.body).toBe(201)
    })

    it('limits permissions to the four scopes (422)', async () => {
      const res = await partner.request('POST', ACCOUNTS, {
        payload: { ...accountRequest(randomUUID()), permissions: ['printers:read', 'admin'] },
        idempotencyKey: randomUUID(),
      })
      expectInjectedError(res, 'validation_failed', { fields: [field('permissions.1', 'body')] })
    })

    it('checks return_uri: https, or http on localhost / 127.0.0.1 only (422 otherwise)', async () => {
      const create = (returnUri: string) =>
        partner.request('POST', ACCOUNTS, {
          payload: {
            ...accountRequest(randomUUID()),
            agent_onboarding: { return_uri: returnUri, state: 's' },
          },
          idempotencyKey: randomUUID(),
        })
      for (const refused of [
        'http://pos.example/done',
        'javascript:alert(1)',
        'https://user:pw@pos.example/done',
        'https://pos.example/done#frag',
        'not a url',
        'ftp://pos.example/done',
      ]) {
        expectInjectedError(await create(refused), 'return_uri_not_allowed', {
          field: 'agent_onboarding.return_uri',
        })
      }
      for (const allowed of [
        'https://pos.example/done?x=1',
        'http://localhost:3000/cb',
        'http://127.0.0.1/cb',
      ]) {
        expect((await create(allowed)).statusCode).toBe(201)
      }
    })

    it('answers 403 to an application without the partner capability, and 401 to an account token', async () => {
      const plain = await registerPartner(cloud, false, 'Plain app')
      expectInjectedError(await plain.request('GET', ACCOUNTS), 'partner_capability_required')
      const customer = await cloud.createAccount()
      const res = await cloud.app.inject({
        method: 'GET',
        url: ACCOUNTS,
        headers: bearer(await customer.token()),
      })
      expectInjectedError(res, 'assertion_invalid')
      expect(res.headers['www-authenticate']).toMatch(/^Bearer realm="print-hub", error="invalid_token"/)
    })
  })

  describe('list and get', () => {
    let mine: string[]

    beforeAll(async () => {
      const lister = await registerPartner(cloud, true, 'Lister')
      partner = lister
      mine = []
      for (const id of ['a', 'b', 'c']) mine.push((await lister.provision(`list-${id}`)).relationship_id)
    })

    it('pages newest first, filters by exact external_customer_id, and shows only its own', async () => {
      const first = await partner.request('GET', `${ACCOUNTS}?limit=2`)
      expect(first.statusCode).toBe(200)
      const page = first.json() as { data: ManagedAccount[]; next_cursor: string }
      expect(page.data.map((a) => a.relationship_id)).toStrictEqual([mine[2], mine[1]])
      expect(page.next_cursor).toBe(mine[1])
      const second = (await partner.request('GET', `${ACCOUNTS}?limit=2&cursor=${page.next_cursor}`)).json()
      expect(second).toStrictEqual({
        data: [expect.objectContaining({ relationship_id: mine[0] })],
        next_cursor: null,
      })
      const filtered = (await partner.request('GET', `${ACCOUNTS}?external_customer_id=list-b`)).json()
      expect(filtered.data.map((a: ManagedAccount) => a.relationship_id)).toStrictEqual([mine[1]])
      expect(
        (await partner.request('GET', `${ACCOUNTS}?external_customer_id=list`)).json().data,
      ).toStrictEqual([])
      // The rival sees none of them, and a cursor of another application's list is refused.
      const theirs = (await rival.request('GET', ACCOUNTS)).json().data as ManagedAccount[]
      expect(theirs.some((a) => mine.includes(a.relationship_id))).toBe(false)
      expectInjectedError(await rival.request('GET', `${ACCOUNTS}?cursor=${mine[0]}`), 'validation_failed', {
        fields: [field('cursor', 'querystring')],
      })
    })

    it('answers 422 for invalid pagination', async () => {
      for (const query of ['limit=0', 'limit=101', 'cursor=nope', 'external_customer_id=', 'other=1']) {
        expectInjectedError(await partner.request('GET', `${ACCOUNTS}?${query}`), 'validation_failed', {
          fields: [expect.objectContaining({ location: 'querystring' })],
        })
      }
      expectInjectedError(
        await partner.request('GET', `${ACCOUNTS}?external_customer_id=${'x'.repeat(161)}`),
        'validation_failed',
        { fields: [field('external_customer_id', 'querystring')] },
      )
    })

    it('summarises hub and printer health', async () => {
      const relationshipId = mine[0] as string
      const account = (await partner.request('GET', `${ACCOUNTS}/${relationshipId}`)).json() as ManagedAccount
      const online = await cloud.storage.agents.insert({
        account_id: account.account_id,
        name: 'Hub',
        online: true,
      })
      await cloud.storage.agents.insert({ account_id: account.account_id, name: 'Spare hub' })
      const revoked = await cloud.storage.agents.insert({ account_id: account.account_id, name: 'Old hub' })
      await cloud.storage.agents.revoke(revoked.agent_id, new Date())
      for (const [name, up] of [
        ['Labels', true],
        ['Receipts', true],
        ['Back office', false],
      ] as const) {
        await cloud.storage.printers.insert({
          account_id: account.account_id,
          agent_id: online.agent_id,
          name,
          capabilities: LABEL_PRINTER,
          reported: up,
        })
      }
      // A printer out of paper, as its hub would report it (arranged in the SQLite file directly).
      const listed = (await cloud.storage.printers.list(account.account_id, 10))?.data ?? []
      const labels = listed.find((p) => p.name === 'Labels')
      const health = { state: 'paper_out', reasons: ['media_out'], checked_at: new Date().toISOString() }
      const db = new Database(path.join(cloud.dataDir, 'cloud.sqlite'))
      try {
        db.prepare('UPDATE printers SET health = ? WHERE printer_id = ?').run(
          JSON.stringify(health),
          labels?.printer_id,
        )
        const ready = { ...health, state: 'ready', reasons: [] }
        const receipts = listed.find((p) => p.name === 'Receipts')
        db.prepare('UPDATE printers SET health = ? WHERE printer_id = ?').run(
          JSON.stringify(ready),
          receipts?.printer_id,
        )
      } finally {
        db.close()
      }
      const res = await partner.request('GET', `${ACCOUNTS}/${relationshipId}`)
      expect(res.statusCode).toBe(200)
      expect(res.json().health).toStrictEqual({
        agents: { total: 2, online: 1, offline: 1 },
        printers: { total: 3, online: 2, offline: 1, needs_attention: 1 },
      })
      const inList = (await partner.request('GET', `${ACCOUNTS}?external_customer_id=list-a`)).json().data[0]
      expect(inList.health).toStrictEqual(res.json().health)
    })

    it('docs/developer-platform.md names the keys of `health` that the service answers', () => {
      const text = readFileSync(new URL('../../../docs/developer-platform.md', import.meta.url), 'utf8')
      const described = /carries `health`:.*?\n\n/s.exec(text)?.[0] ?? ''
      expect(described).not.toBe('')
      for (const [group, schema] of Object.entries(HealthSummary.properties)) {
        expect(described).toContain(`\`${group}\``)
        for (const key of Object.keys(schema.properties)) expect(described).toContain(`\`${key}\``)
      }
    })

    it("answers 404 for another application's account or an unknown one, 422 for an invalid id", async () => {
      expectInjectedError(await rival.request('GET', `${ACCOUNTS}/${mine[0]}`), 'managed_account_not_found')
      expectInjectedError(
        await partner.request('GET', `${ACCOUNTS}/${randomUUID()}`),
        'managed_account_not_found',
      )
      expectInjectedError(await partner.request('GET', `${ACCOUNTS}/nope`), 'validation_failed', {
        fields: [field('relationshipId', 'params')],
      })
    })
  })

  describe('suspend, resume, close', () => {
    it('follows the state rules and stops and restores what the account can do', async () => {
      const shop = await partner.provision()
      const url = `${ACCOUNTS}/${shop.relationship_id}`
      // The customer's own API client and the partner's installation token both work while active.
      const clientSecret = generateSecret('cs')
      const client = await cloud.storage.apiClients.create(shop.account_id, hashSecret(clientSecret), [
        'printers:read',
      ])
      const accountToken = generateSecret('pat')
      await cloud.storage.apiClients.storeToken(hashSecret(accountToken), {
        account_id: shop.account_id,
        client_id: client.client_id,
        scopes: ['printers:read'],
        expires_at: Date.now() + 3600_000,
      })
      const installationToken = async () =>
        partner.request('POST', `/developer-api/v1/app-installations/${shop.installation_id}/access-tokens`)
      const issued = (await installationToken()).json().access_token as string
      const printers = (token: string) =>
        cloud.app.inject({ method: 'GET', url: '/api/v1/printers', headers: bearer(token) })
      expect((await printers(accountToken)).statusCode).toBe(200)
      expect((await printers(issued)).statusCode).toBe(200)

      // resume is for suspended accounts only.
      const resumeActive = await partner.request('POST', `${url}/resume`)
      expectInjectedError(resumeActive, 'account_action_not_allowed', { state: 'active', action: 'resume' })
      expect(resumeActive.json().message).toBe('An active account cannot be resumed.')

      const suspended = await partner.request('POST', `${url}/suspend`)
      expect(suspended.statusCode, suspended.body).toBe(200)
      expect(suspended.json()).toMatchObject({ relationship_id: shop.relationship_id, state: 'suspended' })
      expectInjectedError(await printers(accountToken), 'invalid_token')
      expectInjectedError(await printers(issued), 'invalid_token')
      expectInjectedError(await installationToken(), 'installation_inactive')
      // Suspending again keeps it suspended.
      expect((await partner.request('POST', `${url}/suspend`)).json().state).toBe('suspended')
      expect((await partner.request('GET', url)).json().state).toBe('suspended')

      const resumed = await partner.request('POST', `${url}/resume`)
      expect(resumed.statusCode).toBe(200)
      expect(resumed.json().state).toBe('active')
      expect((await printers(accountToken)).statusCode).toBe(200)
      expect((await printers(issued)).statusCode).toBe(200)
      expect((await installationToken()).statusCode).toBe(200)

      const hub = await cloud.storage.agents.insert({
        account_id: shop.account_id,
        name: 'Hub',
        online: true,
      })
      const closed = await partner.request('POST', `${url}/close`)
      expect(closed.statusCode).toBe(200)
      expect(closed.json().state).toBe('closed')
      expectInjectedError(await printers(accountToken), 'invalid_token')
      expectInjectedError(await printers(issued), 'invalid_token')
      expectInjectedError(await installationToken(), 'installation_inactive')
      // Every credential is revoked for good: the client, the hub, the pending enrollment.
      expect((await cloud.storage.apiClients.findById(client.client_id))?.revoked_at).toMatch(ISO_DATE_TIME)
      expect(
        (await cloud.storage.agents.revokedSince('1970-01-01T00:00:00.000Z')).map((h) => h.agent_id),
      ).toContain(hub.agent_id)
      expect((await cloud.storage.enrollments.findById(shop.agent_enrollment.enrollment_id))?.state).toBe(
        'revoked',
      )
      // Closing is terminal; closing again answers 200.
      expect((await partner.request('POST', `${url}/close`)).statusCode).toBe(200)
      for (const action of ['suspend', 'resume'] as const) {
        expectInjectedError(await partner.request('POST', `${url}/${action}`), 'account_action_not_allowed', {
          state: 'closed',
          action,
        })
      }
      expect((await partner.request('GET', url)).json().state).toBe('closed')
    })

    it('answers 422 for an unknown action and 404 for an account of another application', async () => {
      const shop = await partner.provision()
      expectInjectedError(
        await partner.request('POST', `${ACCOUNTS}/${shop.relationship_id}/delete`),
        'validation_failed',
        {
          fields: [field('action', 'params')],
        },
      )
      expectInjectedError(
        await rival.request('POST', `${ACCOUNTS}/${shop.relationship_id}/suspend`),
        'managed_account_not_found',
      )
      expect((await partner.request('GET', `${ACCOUNTS}/${shop.relationship_id}`)).json().state).toBe(
        'active',
      )
    })
  })
})
