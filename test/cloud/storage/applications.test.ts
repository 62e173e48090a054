import { randomUUID } from 'node:crypto'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { openStorage, type Storage } from '../../../cloud/storage/storage.ts'
import { hashSecret } from '../../../print-api/secrets.ts'
import { ENGINES, storageEngine, type TestStorage } from './engines.ts'

const KEY = { kid: 'key-1', jwk: { kty: 'RSA', n: 'AQAB', e: 'AQAB', kid: 'key-1' } }

describe.each(ENGINES)('developer platform storage on %s', (engine) => {
  const engineUnderTest = storageEngine(engine)
  let opened: TestStorage
  let storage: Storage

  beforeEach(async () => {
    opened = await engineUnderTest.open()
    storage = opened.storage
  })
  afterEach(() => opened.close())

  it('keeps an application, its keys by kid, and refuses a second key of the same kid', async () => {
    const app = await storage.applications.create('POS vendor', true)
    expect(await storage.applications.findById(app.app_id)).toStrictEqual(app)
    expect(await storage.applications.addKey(app.app_id, KEY)).toBe(true)
    expect(await storage.applications.addKey(app.app_id, KEY)).toBe(false)
    expect(await storage.applications.addKey(app.app_id, { ...KEY, kid: 'key-2' })).toBe(true)
    expect((await storage.applications.keys(app.app_id)).map((k) => k.kid)).toStrictEqual(['key-1', 'key-2'])
    expect(await storage.applications.keys(app.app_id, 'key-2')).toStrictEqual([{ ...KEY, kid: 'key-2' }])
    expect(await storage.applications.keys(app.app_id, 'other')).toStrictEqual([])
    expect(await storage.applications.findById(randomUUID())).toBeUndefined()
  })

  it('accepts a jti once until it expires, per application', async () => {
    const now = Date.now()
    expect(await storage.applications.useAssertion('app-a', 'jti-1', now + 60_000, now)).toBe(true)
    expect(await storage.applications.useAssertion('app-a', 'jti-1', now + 60_000, now)).toBe(false)
    expect(await storage.applications.useAssertion('app-b', 'jti-1', now + 60_000, now)).toBe(true)
    // Past their expiry records are purged (such an assertion is refused as expired by then anyway).
    expect(await storage.applications.useAssertion('app-a', 'jti-1', now + 200_000, now + 60_000)).toBe(true)
    const left = await opened.db.selectFrom('used_assertions').selectAll().execute()
    expect(left).toStrictEqual([{ app_id: 'app-a', jti: 'jti-1', expires_at: now + 200_000 }])
  })

  it('finds an installation token only while the installation and its account are active', async () => {
    const app = await storage.applications.create('App', false)
    const account = await storage.accounts.create('Shop')
    const installation = await storage.applications.install(app.app_id, account.account_id, ['printers:read'])
    expect(installation).toMatchObject({ active: true, permissions: ['printers:read'] })
    expect(await storage.applications.installationOf(app.app_id, account.account_id)).toStrictEqual(
      installation,
    )
    const hash = hashSecret('ins_token')
    const token = {
      installation_id: installation.installation_id,
      account_id: account.account_id,
      scopes: ['printers:read' as const],
      expires_at: Date.now() + 60_000,
    }
    await storage.applications.storeToken(hash, token)
    expect(await storage.applications.findToken(hash, Date.now())).toStrictEqual(token)
    expect(await storage.applications.findToken(hash, token.expires_at)).toBeUndefined()
    await opened.db.updateTable('accounts').set({ state: 'suspended' }).execute()
    expect(await storage.applications.findToken(hash, Date.now())).toBeUndefined()
    expect((await storage.applications.findInstallation(installation.installation_id))?.active).toBe(false)
    await opened.db.updateTable('accounts').set({ state: 'active' }).execute()
    expect(await storage.applications.findToken(hash, Date.now())).toStrictEqual(token)
    await storage.applications.deactivateInstallation(installation.installation_id)
    expect(await storage.applications.findToken(hash, Date.now())).toBeUndefined()
    expect(await opened.db.selectFrom('installation_tokens').selectAll().execute()).toStrictEqual([])
    expect(await storage.applications.deleteExpiredTokens(Date.now())).toBe(0)
  })

  it('applies the managed account state rules, and closing revokes every credential in one transaction', async () => {
    const app = await storage.applications.create('POS vendor', true)
    const account = await storage.accounts.create('Shop')
    const installation = await storage.applications.install(app.app_id, account.account_id, ['printers:read'])
    const relationship = await storage.managedAccounts.create({
      appId: app.app_id,
      accountId: account.account_id,
      installationId: installation.installation_id,
      externalCustomerId: 'tenant',
    })
    expect(relationship).toMatchObject({ state: 'active', name: 'Shop', external_customer_id: 'tenant' })
    const hub = await storage.agents.insert({ account_id: account.account_id, name: 'hub', online: true })
    const enrollment = await storage.enrollments.create(
      account.account_id,
      'hub 2',
      hashSecret('enr'),
      new Date(Date.now() + 60_000),
    )
    const at = new Date()
    const step = (action: 'suspend' | 'resume' | 'close') =>
      storage.managedAccounts.transition(app.app_id, relationship.relationship_id, action, at)
    expect(await step('resume')).toStrictEqual({ outcome: 'not_allowed', state: 'active' })
    expect(await step('suspend')).toMatchObject({ outcome: 'done', account: { state: 'suspended' } })
    expect(await step('suspend')).toMatchObject({ outcome: 'done', account: { state: 'suspended' } })
    expect(await step('resume')).toMatchObject({ outcome: 'done', account: { state: 'active' } })
    expect(await step('close')).toMatchObject({ outcome: 'done', account: { state: 'closed' } })
    expect(await step('close')).toMatchObject({ outcome: 'done', account: { state: 'closed' } })
    expect(await step('suspend')).toStrictEqual({ outcome: 'not_allowed', state: 'closed' })
    expect((await storage.agents.revokedSince(at.toISOString())).map((h) => h.agent_id)).toStrictEqual([
      hub.agent_id,
    ])
    expect((await storage.enrollments.findById(enrollment.enrollment_id))?.state).toBe('revoked')
    expect((await storage.applications.findInstallation(installation.installation_id))?.active).toBe(false)
    // Another application never reaches it.
    expect(
      await storage.managedAccounts.transition(randomUUID(), relationship.relationship_id, 'suspend', at),
    ).toStrictEqual({ outcome: 'not_found' })
    expect(await storage.managedAccounts.find(randomUUID(), relationship.relationship_id)).toBeUndefined()
  })

  it('pages an account’s enrollments newest first', async () => {
    const account = await storage.accounts.create('Shop')
    const ids: string[] = []
    for (let i = 0; i < 3; i++) {
      const created = await storage.enrollments.create(
        account.account_id,
        `hub ${i}`,
        hashSecret(`enr-${i}`),
        new Date(Date.now() + 60_000),
        { hash: hashSecret(`onb-${i}`), returnUri: 'https://pos.example/done', state: 's' },
      )
      ids.push(created.enrollment_id)
    }
    const first = await storage.enrollments.list(account.account_id, 2)
    expect(first?.data.map((e) => e.enrollment_id)).toStrictEqual([ids[2], ids[1]])
    const rest = await storage.enrollments.list(account.account_id, 2, first?.next_cursor ?? undefined)
    expect(rest).toStrictEqual({
      data: [expect.objectContaining({ enrollment_id: ids[0] })],
      next_cursor: null,
    })
    expect(await storage.enrollments.list(account.account_id, 2, randomUUID())).toBeUndefined()
  })
})

/**
 * Two cloud nodes on one PostgreSQL database (docs/several-nodes.md): an assertion sent to both at once
 * is accepted by exactly one, and one customer is provisioned once.
 */
describe('two nodes on one PostgreSQL database', () => {
  const engineUnderTest = storageEngine('postgres')
  let first: TestStorage
  let second: Storage

  beforeEach(async () => {
    first = await engineUnderTest.open()
    second = await openStorage(first.settings)
  })
  afterEach(async () => {
    await second.close()
    await first.close()
  })

  it('accept each jti once between them', async () => {
    const now = Date.now()
    for (let round = 0; round < 20; round++) {
      const jti = randomUUID()
      const outcomes = await Promise.all([
        first.storage.applications.useAssertion('app', jti, now + 60_000, now),
        second.applications.useAssertion('app', jti, now + 60_000, now),
      ])
      expect(outcomes.filter(Boolean)).toHaveLength(1)
    }
  })

  it('provision one relationship per external customer id', async () => {
    const app = await first.storage.applications.create('POS vendor', true)
    const provision = (storage: Storage) =>
      storage.atomically(async (tx) => {
        const account = await tx.accounts.create('Shop')
        const installation = await tx.applications.install(app.app_id, account.account_id, ['printers:read'])
        return tx.managedAccounts.create({
          appId: app.app_id,
          accountId: account.account_id,
          installationId: installation.installation_id,
          externalCustomerId: 'same-tenant',
        })
      })
    const outcomes = await Promise.allSettled([provision(first.storage), provision(second)])
    expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(1)
    expect(
      (await first.storage.managedAccounts.list(app.app_id, 10, undefined, undefined))?.data,
    ).toHaveLength(1)
  })
})
