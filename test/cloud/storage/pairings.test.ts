import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { Storage } from '../../../cloud/storage/storage.ts'
import { hashSecret } from '../../../print-api/secrets.ts'
import { ENGINES, storageEngine, type TestStorage } from './engines.ts'

const MINUTE = 60_000
const LINK = { returnUri: 'https://pos.example/done', state: 'st-1' }

describe.each(ENGINES)('pairing storage on %s', (engine) => {
  const engineUnderTest = storageEngine(engine)
  let opened: TestStorage
  let storage: Storage

  beforeEach(async () => {
    opened = await engineUnderTest.open()
    storage = opened.storage
  })
  afterEach(() => opened.close())

  async function enrollmentWithLink(token: string, expiresAt = new Date(Date.now() + 60 * MINUTE)) {
    const account = await storage.accounts.create('Shop')
    const enrollment = await storage.enrollments.create(
      account.account_id,
      'Front desk',
      hashSecret(`enr-${token}`),
      expiresAt,
      {
        hash: hashSecret(token),
        ...LINK,
      },
    )
    return { account, enrollment }
  }

  async function pairing(deviceCode: string, userCode: string, now: number, intervalSeconds = 5) {
    return storage.pairings.create(
      {
        deviceCodeHash: hashSecret(deviceCode),
        userCodeHash: hashSecret(userCode),
        hostname: 'pi-hub',
        expiresAt: now + 10 * MINUTE,
        intervalSeconds,
      },
      now,
    )
  }

  it('answers pending, slow_down (+5 s for every later poll) and pending again once the interval is kept', async () => {
    const now = Date.now()
    expect(await pairing('dev-1', 'BCDFGHJK', now)).toBe(true)
    const poll = (at: number) => storage.pairings.poll(hashSecret('dev-1'), hashSecret('cred'), at)
    expect(await poll(now)).toStrictEqual({ outcome: 'pending' })
    expect(await poll(now + 4_999)).toStrictEqual({ outcome: 'slow_down', intervalSeconds: 10 })
    expect(await poll(now + 14_000)).toStrictEqual({ outcome: 'slow_down', intervalSeconds: 15 })
    expect(await poll(now + 29_000)).toStrictEqual({ outcome: 'pending' })
    expect(await poll(now + 10 * MINUTE)).toStrictEqual({ outcome: 'expired' })
    expect(await storage.pairings.poll(hashSecret('nope'), hashSecret('cred'), now)).toStrictEqual({
      outcome: 'unknown',
    })
  })

  it('refuses a second pairing with a user code in use, and purges pairings an hour past their expiry', async () => {
    const now = Date.now()
    expect(await pairing('dev-1', 'BCDFGHJK', now)).toBe(true)
    expect(await pairing('dev-2', 'BCDFGHJK', now)).toBe(false)
    // Still kept an hour after it expired (its hub reads expired_token), gone after that.
    expect(await pairing('dev-3', 'CDFGHJKL', now + 70 * MINUTE - 1)).toBe(true)
    expect(
      await storage.pairings.poll(hashSecret('dev-1'), hashSecret('c'), now + 70 * MINUTE),
    ).toStrictEqual({
      outcome: 'expired',
    })
    expect(await pairing('dev-2', 'BCDFGHJK', now + 70 * MINUTE + 1)).toBe(true)
    expect(await storage.pairings.poll(hashSecret('dev-1'), hashSecret('c'), now)).toStrictEqual({
      outcome: 'unknown',
    })
  })

  it('pairs once: the link is used, the enrollment claimed, and the credential handed out at one poll only', async () => {
    const now = new Date()
    const { account, enrollment } = await enrollmentWithLink('onb-1')
    await pairing('dev-1', 'BCDFGHJK', now.getTime())
    expect(await storage.pairings.link(hashSecret('onb-1'), now)).toMatchObject({
      outcome: 'open',
      link: LINK,
    })

    const paired = await storage.pairings.pair(hashSecret('onb-1'), hashSecret('BCDFGHJK'), now, 5)
    if (paired.outcome !== 'paired') throw new Error(`not paired: ${paired.outcome}`)
    expect(paired.link).toStrictEqual(LINK)
    expect(paired.enrollment).toMatchObject({ enrollment_id: enrollment.enrollment_id, state: 'claimed' })
    const row = await opened.db
      .selectFrom('enrollments')
      .select(['state', 'agent_id', 'onboarding_used_at'])
      .where('enrollment_id', '=', enrollment.enrollment_id)
      .executeTakeFirstOrThrow()
    expect(row).toStrictEqual({
      state: 'claimed',
      agent_id: paired.agentId,
      onboarding_used_at: now.toISOString(),
    })

    // The link and the code are spent.
    expect(await storage.pairings.link(hashSecret('onb-1'), now)).toMatchObject({ outcome: 'used' })
    expect(await storage.pairings.pair(hashSecret('onb-1'), hashSecret('BCDFGHJK'), now, 5)).toMatchObject({
      outcome: 'used',
    })

    const poll = await storage.pairings.poll(hashSecret('dev-1'), hashSecret('cred-1'), now.getTime() + 6_000)
    expect(poll).toStrictEqual({
      outcome: 'paired',
      agentId: paired.agentId,
      accountId: account.account_id,
      name: 'Front desk',
    })
    const agent = await opened.db
      .selectFrom('agents')
      .select(['credential_hash', 'hostname'])
      .where('agent_id', '=', paired.agentId)
      .executeTakeFirstOrThrow()
    expect(agent).toStrictEqual({ credential_hash: hashSecret('cred-1'), hostname: 'pi-hub' })
    expect(
      await storage.pairings.poll(hashSecret('dev-1'), hashSecret('cred-2'), now.getTime()),
    ).toStrictEqual({
      outcome: 'unknown',
    })
  })

  it('counts wrong codes against the link and spends it at the limit', async () => {
    const now = new Date()
    await enrollmentWithLink('onb-1')
    await pairing('dev-1', 'BCDFGHJK', now.getTime())
    const wrong = () => storage.pairings.pair(hashSecret('onb-1'), hashSecret('ZZZZZZZZ'), now, 2)
    expect(await wrong()).toStrictEqual({
      outcome: 'wrong_code',
      link: LINK,
      hubName: 'Front desk',
      failuresLeft: 1,
    })
    expect(await wrong()).toStrictEqual({
      outcome: 'wrong_code',
      link: LINK,
      hubName: 'Front desk',
      failuresLeft: 0,
    })
    // The right code no longer helps: the link is spent.
    expect(await storage.pairings.pair(hashSecret('onb-1'), hashSecret('BCDFGHJK'), now, 2)).toStrictEqual({
      outcome: 'used',
      link: LINK,
    })
  })

  it('refuses an expired code, an expired link and an unknown link', async () => {
    const now = new Date()
    await enrollmentWithLink('onb-1')
    await pairing('dev-1', 'BCDFGHJK', now.getTime() - 11 * MINUTE)
    expect(await storage.pairings.pair(hashSecret('onb-1'), hashSecret('BCDFGHJK'), now, 5)).toMatchObject({
      outcome: 'wrong_code',
    })
    await enrollmentWithLink('onb-old', new Date(now.getTime() - 1))
    expect(await storage.pairings.link(hashSecret('onb-old'), now)).toStrictEqual({
      outcome: 'expired',
      link: LINK,
    })
    expect(await storage.pairings.link(hashSecret('nope'), now)).toStrictEqual({ outcome: 'unknown' })
  })

  it('pairs one link with one hub only when two codes race for it', async () => {
    const now = new Date()
    await enrollmentWithLink('onb-a')
    await pairing('dev-1', 'BCDFGHJK', now.getTime())
    await pairing('dev-2', 'CDFGHJKL', now.getTime())
    const outcomes = await Promise.all(
      ['BCDFGHJK', 'CDFGHJKL'].map((code) =>
        storage.pairings.pair(hashSecret('onb-a'), hashSecret(code), now, 5),
      ),
    )
    expect(outcomes.map((o) => o.outcome).sort()).toStrictEqual(['paired', 'used'])
    const agents = await opened.db.selectFrom('agents').select('agent_id').execute()
    expect(agents).toHaveLength(1)
  })

  it('pairs one code with one link only when two links race for it', async () => {
    const now = new Date()
    await enrollmentWithLink('onb-a')
    await enrollmentWithLink('onb-b')
    await pairing('dev-1', 'BCDFGHJK', now.getTime())
    const outcomes = await Promise.all(
      ['onb-a', 'onb-b'].map((link) =>
        storage.pairings.pair(hashSecret(link), hashSecret('BCDFGHJK'), now, 5),
      ),
    )
    expect(outcomes.map((o) => o.outcome).sort()).toStrictEqual(['paired', 'wrong_code'])
  })
})
