import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { Storage } from '../../../cloud/storage/storage.ts'
import { hashSecret } from '../../../print-api/secrets.ts'
import { ENGINES, storageEngine, type TestStorage } from './engines.ts'

const HOUR = 3_600_000

describe.each(ENGINES)('console users, sessions and sign-in failures on %s', (engine) => {
  const engineUnderTest = storageEngine(engine)
  let opened: TestStorage
  let storage: Storage
  let accountId: string

  beforeEach(async () => {
    opened = await engineUnderTest.open()
    storage = opened.storage
    accountId = (await storage.accounts.create('Shop')).account_id
  })
  afterEach(() => opened.close())

  const addUser = (email: string, role: 'owner' | 'member' = 'member', account = accountId) =>
    storage.users.create({ accountId: account, email, role }, new Date('2026-01-02T03:04:05.000Z'))

  it('stores e-mails lower-cased, unique within an account whatever their case, and finds them in any case', async () => {
    const user = await addUser('  Ann@Example.TEST ', 'owner')
    expect(user).toStrictEqual({
      user_id: expect.any(String),
      account_id: accountId,
      email: 'ann@example.test',
      role: 'owner',
      created_at: '2026-01-02T03:04:05.000Z',
      has_password: false,
    })
    expect(await addUser('ANN@example.test', 'member')).toBeNull()
    expect(await storage.users.findForSignIn('ann@EXAMPLE.test')).toStrictEqual([
      { user, passwordHash: null },
    ])
    await storage.users.setPasswordHash(user!.user_id, 'scrypt$1$1$1$a$b')
    expect(await storage.users.findForSignIn('ann@example.test')).toStrictEqual([
      { user: { ...user, has_password: true }, passwordHash: 'scrypt$1$1$1$a$b' },
    ])
    expect(await storage.users.findForSignIn('bob@example.test')).toStrictEqual([])
  })

  it('lets another account have a user with the same e-mail: a user of its own, with a password of its own', async () => {
    const ann = (await addUser('ann@example.test', 'owner'))!
    await storage.users.setPasswordHash(ann.user_id, 'scrypt$1$1$1$a$b')
    const other = (await storage.accounts.create('Other')).account_id
    const later = new Date('2026-01-03T00:00:00.000Z')
    const elsewhere = await storage.users.create(
      { accountId: other, email: 'Ann@Example.test', role: 'member' },
      later,
    )
    expect(elsewhere).toStrictEqual({
      ...ann,
      user_id: expect.any(String),
      account_id: other,
      role: 'member',
      created_at: later.toISOString(),
    })
    expect(elsewhere?.user_id).not.toBe(ann.user_id)
    expect(await addUser('ann@example.test', 'owner', other)).toBeNull()
    expect(await storage.users.listByAccount(other)).toStrictEqual([elsewhere])
    expect(await storage.users.findForSignIn('ANN@example.test')).toStrictEqual([
      { user: { ...ann, has_password: true }, passwordHash: 'scrypt$1$1$1$a$b' },
      { user: elsewhere, passwordHash: null },
    ])
  })

  it('removes a user with their sessions and links, never the last owner, never from another account', async () => {
    const owner = (await addUser('owner@example.test', 'owner'))!
    const member = (await addUser('member@example.test'))!
    await storage.consoleSessions.set(hashSecret('s-member'), member.user_id, '{}', Date.now() + HOUR)
    await storage.consoleSessions.set(hashSecret('s-owner'), owner.user_id, '{}', Date.now() + HOUR)
    await storage.users.addSetPasswordLink(member.user_id, hashSecret('link'), Date.now() + HOUR)
    const other = (await storage.accounts.create('Other')).account_id

    expect(await storage.users.remove(other, member.user_id)).toBe('not_found')
    expect(await storage.users.remove(accountId, owner.user_id)).toBe('last_owner')
    expect(await storage.users.remove(accountId, member.user_id)).toBe('removed')
    expect(await storage.users.findById(member.user_id)).toBeUndefined()
    expect(await storage.consoleSessions.get(hashSecret('s-member'), Date.now())).toBeUndefined()
    expect(await storage.consoleSessions.get(hashSecret('s-owner'), Date.now())).toBe('{}')
    expect(await storage.users.findSetPasswordLink(hashSecret('link'), Date.now())).toStrictEqual({
      state: 'unknown',
    })
    expect(await storage.users.remove(accountId, member.user_id)).toBe('not_found')

    const second = (await addUser('second@example.test', 'owner'))!
    expect(await storage.users.remove(accountId, owner.user_id)).toBe('removed')
    expect((await storage.users.listByAccount(accountId)).map((u) => u.email)).toStrictEqual([
      'second@example.test',
    ])
    expect(await storage.users.remove(accountId, second.user_id)).toBe('last_owner')
  })

  it('spends a set-password link once, and not after its expiry', async () => {
    const user = (await addUser('new@example.test'))!
    const now = Date.now()
    await storage.users.addSetPasswordLink(user.user_id, hashSecret('one'), now + HOUR)
    await storage.users.addSetPasswordLink(user.user_id, hashSecret('two'), now + HOUR)
    expect(await storage.users.findSetPasswordLink(hashSecret('one'), now)).toStrictEqual({
      state: 'open',
      user,
      expiresAt: now + HOUR,
    })
    expect(await storage.users.findSetPasswordLink(hashSecret('nope'), now)).toStrictEqual({
      state: 'unknown',
    })
    expect(await storage.users.useSetPasswordLink(hashSecret('two'), 'h-late', now + HOUR)).toStrictEqual({
      state: 'expired',
    })
    const used = await storage.users.useSetPasswordLink(hashSecret('one'), 'h-1', now)
    expect(used).toStrictEqual({
      state: 'open',
      user: { ...user, has_password: true },
      expiresAt: now + HOUR,
    })
    expect(await storage.users.useSetPasswordLink(hashSecret('one'), 'h-2', now)).toStrictEqual({
      state: 'used',
    })
    expect((await storage.users.findForSignIn('new@example.test'))[0]?.passwordHash).toBe('h-1')
  })

  it('keeps console sessions by the digest of their id until their expiry, and purges them after', async () => {
    const now = Date.now()
    await storage.consoleSessions.set(hashSecret('a'), null, '{"n":1}', now + 1000)
    await storage.consoleSessions.set(hashSecret('a'), 'user-1', '{"n":2}', now + 2000)
    await storage.consoleSessions.set(hashSecret('b'), null, '{}', now + 500)
    expect(await storage.consoleSessions.get(hashSecret('a'), now + 1999)).toBe('{"n":2}')
    expect(await storage.consoleSessions.get(hashSecret('a'), now + 2000)).toBeUndefined()
    const rows = await opened.db.selectFrom('console_sessions').select(['session_hash', 'user_id']).execute()
    expect(rows.map((r) => Buffer.from(r.session_hash).toString('hex')).sort()).toStrictEqual(
      [hashSecret('a'), hashSecret('b')].map((h) => h.toString('hex')).sort(),
    )
    expect(await storage.consoleSessions.purgeExpired(now + 500)).toBe(1)
    await storage.consoleSessions.destroy(hashSecret('a'))
    expect(await storage.consoleSessions.get(hashSecret('a'), now)).toBeUndefined()
  })

  it('counts sign-in failures per key in a window, starting again once it ended', async () => {
    const window = 15 * 60_000
    const t0 = 1_700_000_000_000
    expect(await storage.signInFailures.record('email:a', t0, window)).toStrictEqual({
      failures: 1,
      windowStartedAt: t0,
    })
    expect(await storage.signInFailures.record('email:a', t0 + 10, window)).toStrictEqual({
      failures: 2,
      windowStartedAt: t0,
    })
    await storage.signInFailures.record('ip:1.2.3.4', t0 + 20, window)
    expect(
      await storage.signInFailures.current(['email:a', 'ip:1.2.3.4', 'email:b'], t0 + 30, window),
    ).toStrictEqual(
      new Map([
        ['email:a', { failures: 2, windowStartedAt: t0 }],
        ['ip:1.2.3.4', { failures: 1, windowStartedAt: t0 + 20 }],
      ]),
    )
    expect((await storage.signInFailures.current(['email:a'], t0 + window, window)).size).toBe(0)
    expect(await storage.signInFailures.record('email:a', t0 + window, window)).toStrictEqual({
      failures: 1,
      windowStartedAt: t0 + window,
    })
    await storage.signInFailures.clear('email:a')
    await storage.signInFailures.purgeEnded(t0 + 20 + window, window)
    expect(await opened.db.selectFrom('sign_in_failures').selectAll().execute()).toStrictEqual([])
  })
})
