import { afterEach, describe, expect, it } from 'vitest'
import { hashPassword } from '../../../cloud/auth/passwords.ts'
import { safeNext } from '../../../cloud/console/sign-in-pages.ts'
import { hashSecret } from '../../../print-api/secrets.ts'
import { CONSOLE_PASSWORD, type ConsoleHarness, ManualClock, startConsoleHarness } from './console-harness.ts'

const MINUTE = 60_000
const COOKIE = 'console_session'
const errorNotice = (body: string) => /<p class="notice error" role="alert">([^<]*)<\/p>/.exec(body)?.[1]

describe('console sign-in and sign-out', () => {
  let harness: ConsoleHarness
  let clock: ManualClock
  const start = async (env: Record<string, string> = {}) => {
    clock = new ManualClock()
    harness = await startConsoleHarness({ consoleClock: clock, env })
    return harness
  }
  afterEach(() => harness.close())

  const sessionRows = () => harness.cloud.storage.consoleSessions

  it('signs a user in through the form, shows who is signed in, and signs out ending the session row', async () => {
    await start()
    const owner = await harness.signIn('owner')
    const home = await owner.get('/console')
    expect(home.statusCode).toBe(200)
    expect(home.body).toContain(`<span class="who">${owner.user.email}</span>`)
    const id = owner.cookies().get(COOKIE) ?? ''
    expect(await sessionRows().get(hashSecret(id), clock.now())).toContain(owner.user.userId)

    const out = await owner.post('/console/sign-out')
    expect(out.statusCode).toBe(303)
    expect(out.headers.location).toBe('/console/sign-in?done=signed-out')
    expect(out.headers['set-cookie']).toMatch(/^console_session=; Max-Age=0; Path=\/console; Expires=/)
    expect(await sessionRows().get(hashSecret(id), clock.now())).toBeUndefined()
    const after = await owner.get('/console')
    expect(after.statusCode).toBe(303)
    expect(after.headers.location).toBe('/console/sign-in?next=%2Fconsole')
    expect((await harness.anonymous().get('/console/sign-in?done=signed-out')).body).toContain(
      '<p class="notice ok" role="status">You are signed out.</p>',
    )
  })

  it('answers a wrong password and an unknown e-mail alike, with the same page and status', async () => {
    await start()
    const owner = await harness.signIn('owner')
    const wrongPassword = await harness.anonymous().post('/console/sign-in', {
      email: owner.user.email,
      password: 'not the password',
    })
    const unknownEmail = await harness.anonymous().post('/console/sign-in', {
      email: 'nobody@example.test',
      password: CONSOLE_PASSWORD,
    })
    expect([wrongPassword.statusCode, unknownEmail.statusCode]).toStrictEqual([422, 422])
    expect(errorNotice(wrongPassword.body)).toBe('Wrong e-mail or password.')
    expect(errorNotice(unknownEmail.body)).toBe('Wrong e-mail or password.')
    expect(wrongPassword.headers['set-cookie']).toBeUndefined()
    const signedIn = await harness
      .anonymous()
      .post('/console/sign-in', { email: owner.user.email.toUpperCase(), password: CONSOLE_PASSWORD })
    expect(signedIn.statusCode).toBe(303)
  })

  it('sets the session cookie HttpOnly, SameSite=Lax, Path=/console, without Max-Age over http', async () => {
    await start()
    const visitor = harness.anonymous()
    const page = await visitor.get('/console/sign-in')
    const id = visitor.cookies().get(COOKIE) ?? ''
    expect(id).toMatch(/^[A-Za-z0-9_-]{32}$/)
    expect(page.headers['set-cookie']).toBe(`console_session=${id}; Path=/console; HttpOnly; SameSite=Lax`)
  })

  it('over https names it __Host- with Secure and Path=/, and sets none on a plain-http request', async () => {
    await start({ PUBLIC_URL: 'https://console.example', TRUST_PROXY: 'true' })
    const overHttps = await harness.cloud.app.inject({
      method: 'GET',
      url: '/console/sign-in',
      headers: { 'x-forwarded-proto': 'https' },
    })
    expect(overHttps.headers['set-cookie']).toMatch(
      /^__Host-console_session=[A-Za-z0-9_-]{32}; Path=\/; HttpOnly; Secure; SameSite=Lax$/,
    )
    const overHttp = await harness.cloud.app.inject({ method: 'GET', url: '/console/sign-in' })
    expect(overHttp.headers['set-cookie']).toBeUndefined()
  })

  it('over https accepts the Secure session cookie on https requests only, never on a plain-http one', async () => {
    await start({ PUBLIC_URL: 'https://console.example', TRUST_PROXY: 'true' })
    const email = 'secure-owner@example.test'
    const user = await harness.cloud.storage.users.create(
      { accountId: harness.account.accountId, email, role: 'owner' },
      new Date(),
    )
    await harness.cloud.storage.users.setPasswordHash(
      user?.user_id ?? '',
      await hashPassword(CONSOLE_PASSWORD),
    )
    const overHttps = { 'x-forwarded-proto': 'https' }
    const inject = (method: 'GET' | 'POST', url: string, headers: Record<string, string>, payload?: string) =>
      harness.cloud.app.inject({ method, url, headers, ...(payload !== undefined && { payload }) })
    const form = await inject('GET', '/console/sign-in', overHttps)
    const planted = /__Host-console_session=([A-Za-z0-9_-]+)/.exec(String(form.headers['set-cookie']))?.[1]
    const csrf = /name="_csrf" value="([^"]*)"/.exec(form.body)?.[1] ?? ''
    const signedIn = await inject(
      'POST',
      '/console/sign-in',
      {
        ...overHttps,
        cookie: `__Host-console_session=${planted}`,
        'content-type': 'application/x-www-form-urlencoded',
      },
      new URLSearchParams({ _csrf: csrf, email, password: CONSOLE_PASSWORD }).toString(),
    )
    expect(signedIn.statusCode).toBe(303)
    const id = /__Host-console_session=([A-Za-z0-9_-]+)/.exec(String(signedIn.headers['set-cookie']))?.[1]
    const cookie = { cookie: `__Host-console_session=${id}` }
    expect((await inject('GET', '/console', { ...overHttps, ...cookie })).statusCode).toBe(200)
    // The same cookie on a plain-http request (no TLS, nothing from the proxy saying there was) signs no one in.
    const plain = await inject('GET', '/console', cookie)
    expect(plain.statusCode).toBe(303)
    expect(plain.headers.location).toBe('/console/sign-in?next=%2Fconsole')
    expect(plain.headers['set-cookie']).toBeUndefined()
    const plainHttpProto = await inject('GET', '/console/users', { 'x-forwarded-proto': 'http', ...cookie })
    expect(plainHttpProto.statusCode).toBe(303)
    // The session itself is untouched: over https it still works.
    expect((await inject('GET', '/console', { ...overHttps, ...cookie })).statusCode).toBe(200)
  })

  // An e-mail is unique per account (issue 26, point 4): one address may be a user of several accounts, each
  // with a password of its own. The password decides; where it is right for several, the person picks one.
  it('signs an address in to the account whose password it gave, and offers a choice when several fit', async () => {
    await start()
    const here = await harness.signIn('member')
    const email = here.user.email
    const there = await harness.cloud.storage.users.create(
      { accountId: harness.otherAccount.accountId, email, role: 'owner' },
      new Date(),
    )
    const thirdAccount = await harness.cloud.createAccount('Third shop')
    const third = await harness.cloud.storage.users.create(
      { accountId: thirdAccount.accountId, email, role: 'owner' },
      new Date(),
    )
    await harness.cloud.storage.users.setPasswordHash(
      third?.user_id ?? '',
      await hashPassword('a third password'),
    )
    const signIn = (password: string, next = '/console/printers') => {
      const session = harness.anonymous()
      return { session, answer: session.post('/console/sign-in', { email, password, next }) }
    }
    // Only the third account's password: straight in, to that account.
    const alone = signIn('a third password')
    expect((await alone.answer).statusCode).toBe(303)
    expect((await alone.session.get('/console/users')).statusCode).toBe(200)

    // The same password in two accounts (the third's differs): a page naming those two, nothing signed in yet.
    await harness.cloud.storage.users.setPasswordHash(
      there?.user_id ?? '',
      await hashPassword(CONSOLE_PASSWORD),
    )
    const both = signIn(CONSOLE_PASSWORD)
    const choice = await both.answer
    expect(choice.statusCode).toBe(200)
    expect(choice.body).toContain('<h1>Choose an account</h1>')
    const offered = [
      ...choice.body.matchAll(/name="user_id" value="([^"]+)">\n<button type="submit">([^<]+) </g),
    ]
    expect(offered.map((m) => [m[1], m[2]])).toStrictEqual([
      [here.user.userId, 'Corner shop'],
      [there?.user_id, 'Other shop'],
    ])
    expect(choice.body).not.toContain('Third shop')
    expect((await both.session.get('/console')).statusCode).toBe(303)
    // A user id it was not offered (the third account's) signs no one in.
    const forged = await both.session.post('/console/sign-in/account', { user_id: third?.user_id ?? '' })
    expect(forged.statusCode).toBe(303)
    expect(forged.headers.location).toBe('/console/sign-in')
    expect((await both.session.get('/console')).statusCode).toBe(303)
    const chosen = await both.session.post('/console/sign-in/account', { user_id: there?.user_id ?? '' })
    expect(chosen.statusCode).toBe(303)
    expect(chosen.headers.location).toBe('/console/printers')
    expect((await both.session.get('/console/users')).statusCode).toBe(200)
    const users = (await both.session.get('/console/users')).body
    expect(users).not.toContain(harness.account.accountId)

    // The choice lasts five minutes.
    const late = signIn(CONSOLE_PASSWORD)
    expect((await late.answer).statusCode).toBe(200)
    clock.advance(5 * MINUTE)
    const tooLate = await late.session.post('/console/sign-in/account', { user_id: here.user.userId })
    expect(tooLate.headers.location).toBe('/console/sign-in')
    expect((await late.session.get('/console')).statusCode).toBe(303)
    // A wrong password for all three is the one answer.
    expect((await signIn('not any of them').answer).statusCode).toBe(422)
  })

  it('gives a new session id at sign-in: the id held before signs no one in (session fixation)', async () => {
    await start()
    const owner = await harness.signIn('owner')
    const visitor = harness.anonymous()
    await visitor.get('/console/sign-in')
    const before = visitor.cookies().get(COOKIE) ?? ''
    const signedIn = await visitor.post('/console/sign-in', {
      email: owner.user.email,
      password: CONSOLE_PASSWORD,
    })
    expect(signedIn.statusCode).toBe(303)
    const after = visitor.cookies().get(COOKIE) ?? ''
    expect(after).not.toBe(before)
    expect(await sessionRows().get(hashSecret(before), clock.now())).toBeUndefined()
    const planted = await harness.cloud.app.inject({
      method: 'GET',
      url: '/console',
      headers: { cookie: `${COOKIE}=${before}` },
    })
    expect(planted.statusCode).toBe(303)
    expect((await visitor.get('/console')).statusCode).toBe(200)
  })

  it('ends a session after 30 minutes without a request', async () => {
    await start()
    const owner = await harness.signIn('owner')
    clock.advance(29 * MINUTE)
    expect((await owner.get('/console')).statusCode).toBe(200)
    clock.advance(29 * MINUTE)
    expect((await owner.get('/console')).statusCode).toBe(200)
    clock.advance(30 * MINUTE)
    const expired = await owner.get('/console/users')
    expect(expired.statusCode).toBe(303)
    expect(expired.headers.location).toBe('/console/sign-in?next=%2Fconsole%2Fusers')
    clock.advance(-30 * MINUTE)
    expect((await owner.get('/console')).statusCode).toBe(303)
  })

  it('ends a session 12 hours after sign-in however busy it is', async () => {
    await start()
    const owner = await harness.signIn('owner')
    for (let minutes = 20; minutes < 12 * 60; minutes += 20) {
      clock.advance(20 * MINUTE)
      expect((await owner.get('/console')).statusCode, `after ${minutes} minutes`).toBe(200)
    }
    clock.advance(20 * MINUTE)
    expect((await owner.get('/console')).statusCode).toBe(303)
  })

  it('refuses a form without the CSRF token or with a wrong one (403 page) and changes nothing', async () => {
    await start()
    const owner = await harness.signIn('owner')
    for (const token of ['', 'forged-token']) {
      const signOut = await owner.post('/console/sign-out', { _csrf: token })
      expect(signOut.statusCode).toBe(403)
      expect(signOut.headers['content-type']).toBe('text/html; charset=utf-8')
      expect(signOut.body).toContain('<h1>Form expired</h1>')
      expect((await owner.get('/console')).statusCode).toBe(200)
      const add = await owner.post('/console/users', { _csrf: token, email: 'x@example.test', role: 'owner' })
      expect(add.statusCode).toBe(403)
    }
    expect((await harness.cloud.storage.users.listByAccount(owner.user.accountId)).length).toBe(1)
    const noSession = await harness.cloud.app.inject({
      method: 'POST',
      url: '/console/sign-in',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: `email=${encodeURIComponent(owner.user.email)}&password=${encodeURIComponent(CONSOLE_PASSWORD)}`,
    })
    expect(noSession.statusCode).toBe(403)
  })

  it('sends a signed-in user on to `next` within the console only', async () => {
    await start()
    const owner = await harness.signIn('owner')
    const signInWith = async (next: string) => {
      const response = await harness
        .anonymous()
        .post('/console/sign-in', { email: owner.user.email, password: CONSOLE_PASSWORD, next })
      return response.headers.location
    }
    expect(await signInWith('/console/jobs?status=failed')).toBe('/console/jobs?status=failed')
    expect(await signInWith('https://evil.example/console')).toBe('/console')
    expect(await signInWith('//evil.example/console')).toBe('/console')
    const page = await harness.anonymous().get('/console/sign-in?next=%2Fconsole%2Fhubs')
    expect(page.body).toContain('<input type="hidden" name="next" value="/console/hubs">')
  })
})

describe('safeNext', () => {
  it.each([
    ['/console', '/console'],
    ['/console/jobs/abc?status=failed', '/console/jobs/abc?status=failed'],
    ['/console/', '/console/'],
    ['', '/console'],
    ['/consoles', '/console'],
    ['/console/../oauth/token', '/console'],
    ['/console/%2e%2e/x', '/console'],
    ['https://evil.example/console', '/console'],
    ['//evil.example/console', '/console'],
    ['/\\evil.example', '/console'],
    ['/console\\..\\..\\x', '/console'],
    ['/console/\tx', '/console'],
    ['javascript:alert(1)', '/console'],
    ['/console#frag', '/console'],
  ])('%j → %j', (next, expected) => {
    expect(safeNext(next)).toBe(expected)
  })
})

describe('sign-in throttling', () => {
  let harness: ConsoleHarness
  let clock: ManualClock
  afterEach(() => harness.close())

  const attempt = (email: string, password: string, address = '127.0.0.1') =>
    harness.anonymous(address).post('/console/sign-in', { email, password })

  it('per e-mail: slowed after 3 failures, refused with 429 and Retry-After from the 10th for the window', async () => {
    clock = new ManualClock()
    harness = await startConsoleHarness({ consoleClock: clock })
    const owner = await harness.signIn('owner')
    for (let failure = 1; failure <= 10; failure += 1) {
      const address = `10.0.0.${failure}`
      expect((await attempt(owner.user.email, 'wrong password', address)).statusCode).toBe(422)
      clock.advance(1000)
    }
    expect(clock.sleeps).toStrictEqual([1000, 2000, 4000, 8000, 8000, 8000, 8000])
    const refused = await attempt(owner.user.email, CONSOLE_PASSWORD, '10.0.1.1')
    expect(refused.statusCode).toBe(429)
    expect(refused.headers['retry-after']).toBe(String(15 * 60 - 10))
    expect(refused.body).toContain('<h1>Too many attempts</h1>')
    const unknown = await attempt(owner.user.email.toUpperCase(), 'wrong password', '10.0.1.2')
    expect(unknown.statusCode).toBe(429)
    expect((await harness.anonymous('10.0.1.3').get('/console/sign-in')).statusCode).toBe(200)

    clock.advance(15 * MINUTE)
    expect((await attempt(owner.user.email, CONSOLE_PASSWORD, '10.0.1.1')).statusCode).toBe(303)
  })

  it('per address: slowed after 10 failures, refused from the 30th; another address is not', async () => {
    clock = new ManualClock()
    harness = await startConsoleHarness({ consoleClock: clock })
    const owner = await harness.signIn('owner')
    for (let failure = 1; failure <= 30; failure += 1) {
      expect((await attempt(`guess-${failure}@example.test`, 'wrong password', '192.0.2.7')).statusCode).toBe(
        422,
      )
    }
    expect(clock.sleeps.slice(0, 4)).toStrictEqual([1000, 2000, 4000, 8000])
    expect(clock.sleeps.length).toBe(20)
    const refused = await attempt(owner.user.email, CONSOLE_PASSWORD, '192.0.2.7')
    expect(refused.statusCode).toBe(429)
    expect(refused.headers['retry-after']).toBe(String(15 * 60))
    expect((await attempt(owner.user.email, CONSOLE_PASSWORD, '192.0.2.8')).statusCode).toBe(303)
    const counted = await harness.cloud.storage.signInFailures.current(
      ['ip:192.0.2.7'],
      clock.now(),
      15 * MINUTE,
    )
    expect(counted.get('ip:192.0.2.7')?.failures).toBe(30)
    // 31 sign-ins through scrypt (about 0.25 s each here, more on a busy machine).
  }, 120_000)

  it('a right password clears the e-mail’s count, not the address’s', async () => {
    clock = new ManualClock()
    harness = await startConsoleHarness({ consoleClock: clock })
    const owner = await harness.signIn('owner')
    for (let failure = 1; failure <= 3; failure += 1) await attempt(owner.user.email, 'wrong', '198.51.100.1')
    expect((await attempt(owner.user.email, CONSOLE_PASSWORD, '198.51.100.1')).statusCode).toBe(303)
    const counts = await harness.cloud.storage.signInFailures.current(
      ['ip:198.51.100.1', `email:${owner.user.email}`],
      clock.now(),
      15 * MINUTE,
    )
    expect(counts).toStrictEqual(
      new Map([['ip:198.51.100.1', { failures: 3, windowStartedAt: clock.now() }]]),
    )
  })
})
