import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import {
  CONSOLE_PASSWORD,
  type ConsoleHarness,
  consoleSession,
  startConsoleHarness,
} from './console-harness.ts'

const SET_PASSWORD_URL =
  /<code id="set-password-url">(http:\/\/127\.0\.0\.1:8080\/console\/set-password\/(spw_[\w-]+))<\/code>/

describe('console Users page', () => {
  let harness: ConsoleHarness
  beforeEach(async () => {
    harness = await startConsoleHarness()
  })
  afterEach(() => harness.close())

  it('is for owners only: a member gets the 403 page there and on API clients, and no link to either', async () => {
    const member = await harness.signIn('member')
    for (const path of ['/console/users', '/console/api-clients']) {
      const page = await member.get(path)
      expect(page.statusCode, path).toBe(403)
      expect(page.body).toContain('<h1>Not allowed</h1>')
      expect((await member.get('/console')).body).not.toContain(`href="${path}"`)
    }
    const add = await member.post('/console/users', { email: 'sneaky@example.test', role: 'owner' })
    expect(add.statusCode).toBe(403)
    const owner = await harness.signIn('owner')
    const remove = await member.post(`/console/users/${owner.user.userId}/remove`)
    expect(remove.statusCode).toBe(403)
    expect((await harness.cloud.storage.users.listByAccount(harness.account.accountId)).length).toBe(2)
  })

  it('lists the account’s users only, with role and whether their password is set', async () => {
    const owner = await harness.signIn('owner')
    await harness.signIn('member')
    await harness.signIn('owner', harness.otherAccount.accountId)
    const page = await owner.get('/console/users')
    expect(page.statusCode).toBe(200)
    const rows = [...page.body.matchAll(/<tr><th scope="row">([^<\s]+)/g)].map((m) => m[1])
    expect(rows.sort()).toStrictEqual([owner.user.email, expect.stringMatching(/^member-2-/)].sort())
    expect(page.body).toContain('<span class="muted">(you)</span>')
    expect(page.body).toContain('<label for="email">E-mail</label>')
    expect(page.body).toContain('<label for="role">Role</label>')
  })

  it('adds a member and shows their one-time set-password link once; the link sets a password', async () => {
    const owner = await harness.signIn('owner')
    const added = await owner.post('/console/users', { email: 'New.Person@Example.test', role: 'member' })
    expect(added.statusCode).toBe(201)
    const [, url = '', token = ''] = SET_PASSWORD_URL.exec(added.body) ?? []
    expect(url).not.toBe('')
    expect(added.body).toContain('It is shown only now, works once and expires in 72 hours.')
    const listed = await owner.get('/console/users')
    expect(listed.body).not.toContain(token)
    expect(listed.body).toContain('new.person@example.test')
    expect(listed.body).toContain('<span class="badge warn">not set yet</span>')

    const person = consoleSession(harness.cloud)
    const form = await person.get(`/console/set-password/${token}`)
    expect(form.statusCode).toBe(200)
    const set = await person.post(`/console/set-password/${token}`, {
      password: 'a long enough passphrase',
      confirmation: 'a long enough passphrase',
    })
    expect(set.statusCode).toBe(303)
    const signedIn = await person.post('/console/sign-in', {
      email: 'new.person@example.test',
      password: 'a long enough passphrase',
    })
    expect(signedIn.statusCode).toBe(303)
    const home = await person.get('/console')
    expect(home.body).toContain('<span class="who">new.person@example.test</span>')
    expect(home.body).not.toContain('href="/console/users"')
  })

  it('refuses a taken e-mail (any case), a malformed e-mail and an unknown role, keeping what was typed', async () => {
    const owner = await harness.signIn('owner')
    const taken = await owner.post('/console/users', {
      email: owner.user.email.toUpperCase(),
      role: 'member',
    })
    expect(taken.statusCode).toBe(422)
    expect(taken.body).toContain('This account already has a user with this e-mail.')
    const malformed = await owner.post('/console/users', { email: 'not an address', role: 'member' })
    expect(malformed.statusCode).toBe(422)
    expect(malformed.body).toContain('value="not an address"')
    const role = await owner.post('/console/users', { email: 'r@example.test', role: 'admin' })
    expect(role.statusCode).toBe(422)
    expect(role.body).toContain('Choose a role.')
    expect((await harness.cloud.storage.users.listByAccount(owner.user.accountId)).length).toBe(1)
  })

  // Issue 26, point 4: adding a user must not tell an owner whether an address is a customer elsewhere.
  it('adds an address that another account uses exactly as a new one, with no access to that account', async () => {
    const owner = await harness.signIn('owner')
    const elsewhere = await harness.signIn('owner', harness.otherAccount.accountId)
    /** The answer to adding `email`, with the address and the link's token taken out. */
    const add = async (email: string) => {
      const added = await owner.post('/console/users', { email, role: 'member' })
      const [, , token = ''] = SET_PASSWORD_URL.exec(added.body) ?? []
      const created =
        /<section aria-labelledby="created-heading">[\s\S]*?<\/section>/.exec(added.body)?.[0] ?? ''
      const notice = /<p class="notice[^>]*>[^<]*<\/p>/.exec(added.body)?.[0]
      return {
        status: added.statusCode,
        token,
        shown: {
          notice,
          created: created.replaceAll(email.toLowerCase(), 'EMAIL').replaceAll(token, 'TOKEN'),
        },
      }
    }
    const known = await add(elsewhere.user.email.toUpperCase())
    const unknown = await add('nobody-yet@example.test')
    expect(known.status).toBe(201)
    const [before] = await harness.cloud.storage.users.findForSignIn(elsewhere.user.email)
    expect(known.shown).toStrictEqual(unknown.shown)
    expect(known.shown.notice).toBe('<p class="notice ok" role="status">User added.</p>')
    const listed = (await owner.get('/console/users')).body
    expect(listed).toContain(
      `${elsewhere.user.email}</th>\n<td>member</td>\n<td><span class="badge warn">not set yet</span>`,
    )

    // The link makes a user of this account with a password of its own; the other account's user, its
    // password and its session are untouched, and neither password opens the other account.
    const person = consoleSession(harness.cloud)
    await person.get(`/console/set-password/${known.token}`)
    const set = await person.post(`/console/set-password/${known.token}`, {
      password: 'another long passphrase',
      confirmation: 'another long passphrase',
    })
    expect(set.statusCode).toBe(303)
    const [still] = (await harness.cloud.storage.users.findForSignIn(elsewhere.user.email)).filter(
      (c) => c.user.account_id === harness.otherAccount.accountId,
    )
    expect(still).toStrictEqual(before)
    expect((await elsewhere.get('/console/users')).statusCode).toBe(200)
    const signIn = async (password: string) => {
      const session = consoleSession(harness.cloud)
      const answer = await session.post('/console/sign-in', { email: elsewhere.user.email, password })
      expect(answer.statusCode).toBe(303)
      return session
    }
    const here = await signIn('another long passphrase')
    expect((await here.get('/console/users')).statusCode).toBe(403)
    expect((await here.get('/console')).body).toContain(`<span class="who">${elsewhere.user.email}</span>`)
    const there = await signIn(CONSOLE_PASSWORD)
    const theirUsers = await there.get('/console/users')
    expect(theirUsers.statusCode).toBe(200)
    expect(theirUsers.body).not.toContain('nobody-yet@example.test')
  })

  it('removes a user, whose sessions end at once; not yourself; another account’s user is a 404', async () => {
    const owner = await harness.signIn('owner')
    const member = await harness.signIn('member')
    expect((await member.get('/console')).statusCode).toBe(200)

    const removed = await owner.post(`/console/users/${member.user.userId}/remove`)
    expect(removed.statusCode).toBe(303)
    expect(removed.headers.location).toBe('/console/users?done=removed')
    expect((await owner.get('/console/users?done=removed')).body).toContain(
      'The user is removed and signed out everywhere.',
    )
    const after = await member.get('/console')
    expect(after.statusCode).toBe(303)
    expect(after.headers.location).toBe('/console/sign-in?next=%2Fconsole')

    const yourself = await owner.post(`/console/users/${owner.user.userId}/remove`)
    expect(yourself.headers.location).toBe('/console/users?done=not-yourself')
    expect((await owner.get('/console')).statusCode).toBe(200)

    const stranger = await harness.signIn('member', harness.otherAccount.accountId)
    for (const id of [stranger.user.userId, 'not-a-user', '%00', 'x'.repeat(500)]) {
      const response = await owner.post(`/console/users/${encodeURIComponent(id)}/remove`)
      expect(response.statusCode, id).toBe(404)
      expect(response.body).toContain('<h1>User not found</h1>')
    }
    expect((await stranger.get('/console')).statusCode).toBe(200)
  })

  it('lets an owner remove another owner; the account keeps its last one', async () => {
    const owner = await harness.signIn('owner')
    const other = await harness.signIn('owner')
    const removed = await owner.post(`/console/users/${other.user.userId}/remove`)
    expect(removed.headers.location).toBe('/console/users?done=removed')
    expect(
      (await harness.cloud.storage.users.remove(owner.user.accountId, owner.user.userId)) as string,
    ).toBe('last_owner')
  })
})
