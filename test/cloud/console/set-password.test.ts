import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { createUserWithLink } from '../../../cloud/console/new-user.ts'
import { hashSecret } from '../../../print-api/secrets.ts'
import { type ConsoleHarness, consoleSession, ManualClock, startConsoleHarness } from './console-harness.ts'

const HOUR = 3_600_000
const PASSPHRASE = 'four words are plenty'

describe('console set-password link', () => {
  let harness: ConsoleHarness
  let clock: ManualClock
  let token: string
  let email: string
  beforeEach(async () => {
    clock = new ManualClock()
    harness = await startConsoleHarness({ consoleClock: clock })
    const created = await createUserWithLink(
      harness.cloud.storage,
      { accountId: harness.account.accountId, email: 'Invited@Example.test', role: 'owner' },
      { publicUrl: harness.cloud.config.publicUrl, ttlHours: 72, now: clock.now() },
    )
    if (created.outcome !== 'created') throw new Error(created.outcome)
    token = created.setPasswordUrl.split('/').at(-1) ?? ''
    email = created.user.email
  })
  afterEach(() => harness.close())

  const setPassword = (password: string, confirmation = password, session = consoleSession(harness.cloud)) =>
    session.post(`/console/set-password/${token}`, { password, confirmation })

  it('shows a labelled form for the user, sets the password once, and the second use is a 410', async () => {
    const session = consoleSession(harness.cloud)
    const form = await session.get(`/console/set-password/${token}`)
    expect(form.statusCode).toBe(200)
    expect(form.body).toContain('<strong>invited@example.test</strong>')
    expect(form.body).toContain('<label for="password">New password</label>')
    expect(form.body).toContain('<label for="confirmation">New password again</label>')
    expect(form.headers['cache-control']).toBe('no-store')

    const set = await setPassword(PASSPHRASE, PASSPHRASE, session)
    expect(set.statusCode).toBe(303)
    expect(set.headers.location).toBe('/console/sign-in?done=password-set')
    const [stored] = await harness.cloud.storage.users.findForSignIn(email)
    expect(stored?.passwordHash).toMatch(/^scrypt\$32768\$8\$3\$[\w-]{22}\$[\w-]{43}$/)

    const again = await setPassword('another passphrase')
    expect(again.statusCode).toBe(410)
    expect(again.body).toContain('This link has been used.')
    expect((await consoleSession(harness.cloud).get(`/console/set-password/${token}`)).statusCode).toBe(410)
    expect((await harness.cloud.storage.users.findForSignIn(email))[0]?.passwordHash).toBe(
      stored?.passwordHash,
    )
    const signedIn = await consoleSession(harness.cloud).post('/console/sign-in', {
      email,
      password: PASSPHRASE,
    })
    expect(signedIn.statusCode).toBe(303)
  })

  it('expires after 72 hours', async () => {
    clock.advance(72 * HOUR - 1)
    expect((await consoleSession(harness.cloud).get(`/console/set-password/${token}`)).statusCode).toBe(200)
    clock.advance(1)
    const page = await consoleSession(harness.cloud).get(`/console/set-password/${token}`)
    expect(page.statusCode).toBe(410)
    expect(page.body).toContain('This link has expired.')
    expect((await setPassword(PASSPHRASE)).statusCode).toBe(410)
    expect((await harness.cloud.storage.users.findForSignIn(email))[0]?.passwordHash).toBeNull()
  })

  it('wants 8 to 128 characters and the same password twice; the link stays usable meanwhile', async () => {
    const short = await setPassword('seven c')
    expect(short.statusCode).toBe(422)
    expect(short.body).toContain('The password needs at least 8 characters.')
    const long = await setPassword('x'.repeat(129))
    expect(long.statusCode).toBe(422)
    expect(long.body).toContain('The password can have at most 128 characters.')
    const different = await setPassword(PASSPHRASE, `${PASSPHRASE}!`)
    expect(different.statusCode).toBe(422)
    expect(different.body).toContain('The two passwords are not the same.')
    expect((await setPassword('ünïcödé 8')).statusCode).toBe(303)
  })

  it('answers an unknown or malformed token with a 404 page, and stores only the token’s digest', async () => {
    for (const path of ['spw_unknown', 'x'.repeat(900), '%00', '..%2F..']) {
      const page = await consoleSession(harness.cloud).get(`/console/set-password/${path}`)
      expect(page.statusCode, path).toBe(404)
      expect(page.body).toContain('This link is not valid.')
    }
    const rows = await harness.cloud.storage.users.findSetPasswordLink(hashSecret(token), clock.now())
    expect(rows.state).toBe('open')
  })
})
