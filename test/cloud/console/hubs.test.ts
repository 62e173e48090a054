import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createEnrollment } from '../../../cloud/onboarding/new-enrollment.ts'
import { openDatabase } from '../../../cloud/storage/database.ts'
import { databaseLocation } from '../../../cloud/storage/storage.ts'
import type { TestAccount } from '../test-cloud.ts'
import { type ConsoleClient, type ConsoleHarness, startConsoleHarness } from './console-harness.ts'
import { facts, partUnder, tableRows, textOf } from './page-text.ts'

const TOKEN = /enr_[A-Za-z0-9_-]{43}/
const ONBOARDING_URL = /http:\/\/127\.0\.0\.1:8080\/onboarding\/onb_[A-Za-z0-9_-]{43}/

describe('console hubs pages', () => {
  let h: ConsoleHarness

  beforeAll(async () => {
    h = await startConsoleHarness()
  })
  afterAll(async () => {
    await h?.close()
  })

  /** An account of its own (a hub with two printers) with a member signed in: members manage hubs. */
  const freshAccount = async (
    name = 'Hub shop',
  ): Promise<{ account: TestAccount; member: ConsoleClient }> => {
    const account = await h.cloud.createAccount(name)
    return { account, member: await h.signIn('member', account.accountId) }
  }
  /** What a hub does with its token: POST /agent-api/v1/enroll (the real endpoint). */
  const enroll = (token: string) =>
    h.cloud.app.inject({
      method: 'POST',
      url: '/agent-api/v1/enroll',
      payload: { token, hostname: 'pi-till', agent_version: '1.4.2' },
    })
  /** A request of the agent API with a hub's credential. */
  const connection = (credential: string) =>
    h.cloud.app.inject({
      method: 'GET',
      url: '/agent-api/v1/connection',
      headers: { authorization: `Bearer ${credential}` },
    })
  /** Adds a hub on the Hubs page: the answer, and the token it shows. */
  const addHub = async (client: ConsoleClient, name: string) => {
    const res = await client.post('/console/hubs/enrollments', { name })
    expect(res.statusCode, res.body.slice(0, 500)).toBe(201)
    const token = TOKEN.exec(res.body)?.[0]
    if (!token) throw new Error('no token on the page')
    return { res, token }
  }
  /** A hub of the account enrolled through the console and the agent API, with its credential. */
  const enrolledHub = async (client: ConsoleClient, name: string) => {
    const { token } = await addHub(client, name)
    const enrolled = await enroll(token)
    expect(enrolled.statusCode, enrolled.body).toBe(201)
    return enrolled.json() as { agent_id: string; credential: string; name: string }
  }

  it('lists the account’s hubs with online state, last seen, version and printers, and its pending enrollments', async () => {
    const { account, member } = await freshAccount()
    const { storage } = h.cloud
    await storage.agents.recordState(
      account.agentId,
      { version: '1.4.2', lan: null },
      '2026-11-24T10:00:00.000Z',
    )
    const spare = await storage.agents.insert({
      account_id: account.accountId,
      name: 'Spare',
      last_seen_at: '2026-11-20T08:30:00.000Z',
    })
    const stolen = await storage.agents.insert({ account_id: account.accountId, name: 'Stolen hub' })
    await storage.agents.revoke(stolen.agent_id, new Date())
    const asked = (name: string, accountId = account.accountId) => ({ accountId, name, ttlHours: 24 })
    const pending = await createEnrollment(storage.enrollments, asked('Till 3'))
    const revoked = await createEnrollment(storage.enrollments, asked('Withdrawn'))
    await storage.enrollments.revoke(revoked.enrollment.enrollment_id, new Date())
    await createEnrollment(storage.enrollments, asked('Not yours', h.otherAccount.accountId))

    const res = await member.get('/console/hubs')
    expect(res.statusCode).toBe(200)
    expect(res.body).toContain('<a href="/console/hubs" aria-current="page">Hubs</a>')
    expect(tableRows(partUnder(res.body, 'Hubs of this account'))).toEqual([
      ['Spare', 'Offline', '2026-11-20 08:30:00 UTC', 'Not reported yet', 'No printers'],
      ['Front desk hub', 'Online', '2026-11-24 10:00:00 UTC', '1.4.2', '2 printers'],
    ])
    expect(res.body).toContain(`<a href="/console/hubs/${spare.agent_id}">Spare</a>`)
    const created = pending.enrollment.created_at
    const expires = pending.enrollment.expires_at
    const words = (iso: string) => `${iso.slice(0, 10)} ${iso.slice(11, 19)} UTC`
    expect(tableRows(partUnder(res.body, 'Pending enrollments'))).toEqual([
      ['Till 3', words(created), words(expires), 'Revoke'],
    ])
    expect(res.body).not.toContain(pending.token)
  })

  it('adds a hub: the token and the installer’s commands shown once, and the token enrolls a hub', async () => {
    const { account, member } = await freshAccount()
    const { res, token } = await addHub(member, '  Till 2  ')
    expect(res.headers['cache-control']).toBe('no-store')
    expect(textOf(res.body)).toContain('Enrollment created. Connect the hub with it as shown below.')
    expect(res.body).toContain(`<code id="enrollment-token">${token}</code>`)
    const text = textOf(res.body)
    // The packaged hub's settings (packaging/print-hub.default) and its service, as docs/releases.md "Install a hub".
    expect(text).toContain(
      [
        "sudo tee /etc/default/print-hub >/dev/null <<'EOF'",
        'PRINT_HUB_CLOUD=http://127.0.0.1:8080',
        `PRINT_HUB_OPTIONS=--enroll ${token}`,
        'EOF',
        'sudo systemctl restart print-hub',
      ].join(' '),
    )
    expect(text).toContain(
      `npm run -s hub -- run --cloud http://127.0.0.1:8080 --data ./hub-data --enroll ${token}`,
    )
    expect(res.body).toMatch(ONBOARDING_URL)
    expect(tableRows(partUnder(res.body, 'Pending enrollments'))[0]?.[0]).toBe('Till 2')

    // Shown once: the list afterwards has the enrollment, never its token or link.
    const list = await member.get('/console/hubs')
    expect(tableRows(partUnder(list.body, 'Pending enrollments')).map((row) => row[0])).toEqual(['Till 2'])
    expect(list.body).not.toContain(token)
    expect(list.body).not.toMatch(ONBOARDING_URL)

    // The hub enrolls with the token at the agent API, in this account, under the name given.
    const enrolled = await enroll(token)
    expect(enrolled.statusCode, enrolled.body).toBe(201)
    expect(enrolled.json()).toMatchObject({ account_id: account.accountId, name: 'Till 2' })
    expect((await connection(enrolled.json().credential)).statusCode).toBe(200)
    // Once only.
    expect((await enroll(token)).json().error_code).toBe('enrollment_claimed')

    const after = await member.get('/console/hubs')
    expect(tableRows(partUnder(after.body, 'Hubs of this account'))[0]).toEqual([
      'Till 2',
      'Offline',
      'Not yet',
      'Not reported yet',
      'No printers',
    ])
    expect(textOf(partUnder(after.body, 'Pending enrollments'))).toContain(
      'No enrollments are waiting for a hub.',
    )
  })

  it('adds a hub by the onboarding link: a pairing hub’s code typed there, then back to the Hubs page', async () => {
    const { account, member } = await freshAccount()
    const { res } = await addHub(member, 'Paired till')
    const link = ONBOARDING_URL.exec(res.body)?.[0]
    if (!link) throw new Error('no onboarding link')
    const path = new URL(link).pathname
    expect((await h.cloud.app.inject({ method: 'GET', url: path })).statusCode).toBe(200)

    // A hub without a token asks for a pairing; its code is typed on the onboarding page.
    const pairing = await h.cloud.app.inject({
      method: 'POST',
      url: '/agent-api/v1/pairings',
      payload: { hostname: 'pi-pairing', agent_version: '1.4.2' },
    })
    expect(pairing.statusCode, pairing.body).toBe(201)
    const { device_code, user_code } = pairing.json() as { device_code: string; user_code: string }
    const typed = await h.cloud.app.inject({
      method: 'POST',
      url: path,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({ code: user_code }).toString(),
    })
    expect(typed.statusCode, typed.body).toBe(303)
    const back = new URL(String(typed.headers.location))
    expect(`${back.origin}${back.pathname}`).toBe('http://127.0.0.1:8080/console/hubs')
    expect(back.searchParams.get('result')).toBe('paired')
    const agentId = back.searchParams.get('agent_id')

    // The hub gets its credential; it is the account's hub.
    const token = await h.cloud.app.inject({
      method: 'POST',
      url: '/agent-api/v1/pairings/token',
      payload: { device_code },
    })
    expect(token.statusCode, token.body).toBe(200)
    expect(token.json()).toMatchObject({
      agent_id: agentId,
      account_id: account.accountId,
      name: 'Paired till',
    })

    const page = await member.get(`${back.pathname}${back.search}`)
    expect(page.statusCode).toBe(200)
    expect(page.body).toContain(
      '<p class="notice ok" role="status">The hub is paired. It shows as online here once it has connected.</p>',
    )
    expect(tableRows(partUnder(page.body, 'Hubs of this account')).map((row) => row[0])).toContain(
      'Paired till',
    )
  })

  it('refuses a hub name the API would refuse, keeping what was typed', async () => {
    const { account, member } = await freshAccount()
    for (const name of ['', '   ', 'x'.repeat(201), 'Till\u00001']) {
      const res = await member.post('/console/hubs/enrollments', { name })
      expect(res.statusCode, JSON.stringify(name)).toBe(422)
      expect(res.body).toContain(
        '<p class="notice error" role="alert">Enter a name of 1 to 200 characters.</p>',
      )
      expect(res.body).not.toMatch(TOKEN)
    }
    const long = await member.post('/console/hubs/enrollments', { name: 'x'.repeat(201) })
    expect(long.body).toContain(`value="${'x'.repeat(201)}"`)
    expect(await h.cloud.storage.enrollments.listPending(account.accountId, new Date())).toEqual([])
    // 200 characters is a name.
    await addHub(member, 'y'.repeat(200))
  })

  it('refuses to add a hub to a suspended account, as the partner API does', async () => {
    const { account, member } = await freshAccount()
    const database = await openDatabase(databaseLocation({ dataDir: h.cloud.dataDir }))
    try {
      await database.db
        .updateTable('accounts')
        .set({ state: 'suspended' })
        .where('account_id', '=', account.accountId)
        .execute()
    } finally {
      await database.db.destroy()
    }
    const res = await member.post('/console/hubs/enrollments', { name: 'Till 9' })
    expect(res.statusCode).toBe(422)
    expect(res.body).toContain(
      '<p class="notice error" role="alert">account_action_not_allowed: A suspended or closed account takes no new enrollments.</p>',
    )
    expect(res.body).not.toMatch(TOKEN)
    expect(await h.cloud.storage.enrollments.listPending(account.accountId, new Date())).toEqual([])
  })

  it('revokes a pending enrollment: its token no longer enrolls a hub', async () => {
    const { account, member } = await freshAccount()
    const { token } = await addHub(member, 'Till 4')
    const [enrollment] = await h.cloud.storage.enrollments.listPending(account.accountId, new Date())
    if (!enrollment) throw new Error('no pending enrollment')
    const res = await member.post(`/console/hubs/enrollments/${enrollment.enrollment_id}/revoke`)
    expect(res.statusCode).toBe(303)
    expect(res.headers.location).toBe('/console/hubs?done=enrollment-revoked')
    const list = await member.get('/console/hubs?done=enrollment-revoked')
    expect(list.body).toContain(
      '<p class="notice ok" role="status">The enrollment is revoked: its token and its link no longer work.</p>',
    )
    expect(textOf(partUnder(list.body, 'Pending enrollments'))).toContain(
      'No enrollments are waiting for a hub.',
    )
    expect((await h.cloud.storage.enrollments.findById(enrollment.enrollment_id))?.state).toBe('revoked')
    expect((await enroll(token)).json().error_code).toBe('enrollment_revoked')

    // Revoking it again (or a used one) changes nothing and says so.
    const again = await member.post(`/console/hubs/enrollments/${enrollment.enrollment_id}/revoke`)
    expect(again.headers.location).toBe('/console/hubs?done=enrollment-not-pending')
  })

  it('renames a hub with the same name limits, escaping the name everywhere', async () => {
    const { account, member } = await freshAccount()
    const path = `/console/hubs/${account.agentId}`
    const page = await member.get(path)
    expect(page.statusCode).toBe(200)
    expect(facts(page.body)).toMatchObject({
      Hub: 'Online',
      Version: 'Not reported yet',
      'Hub id': account.agentId,
    })
    expect(page.body).toContain('<label for="hub-rename">Name</label>')

    const res = await member.post(`${path}/rename`, { name: '  <script>alert(1)</script>  ' })
    expect(res.statusCode).toBe(303)
    expect(res.headers.location).toBe(`${path}?done=renamed`)
    expect((await h.cloud.storage.agents.findById(account.agentId))?.name).toBe('<script>alert(1)</script>')
    for (const shown of [`${path}?done=renamed`, '/console/hubs', '/console']) {
      const body = (await member.get(shown)).body
      expect(body, shown).toContain('&lt;script&gt;alert(1)&lt;/script&gt;')
      expect(body, shown).not.toContain('<script>alert')
    }
    expect((await member.get(`${path}?done=renamed`)).body).toContain(
      '<p class="notice ok" role="status">The hub is renamed.</p>',
    )

    const refused = await member.post(`${path}/rename`, { name: 'z'.repeat(201) })
    expect(refused.statusCode).toBe(422)
    expect(refused.body).toContain(
      '<p class="notice error" role="alert">Enter a name of 1 to 200 characters.</p>',
    )
    expect(refused.body).toContain(`value="${'z'.repeat(201)}"`)
    expect((await h.cloud.storage.agents.findById(account.agentId))?.name).toBe('<script>alert(1)</script>')
  })

  it('removes a hub after a confirmation: its credential is refused and it is offline', async () => {
    const { account, member } = await freshAccount()
    const hub = await enrolledHub(member, 'Lost till')
    expect((await connection(hub.credential)).statusCode).toBe(200)
    await h.cloud.storage.hubPresence.markOnline(hub.agent_id, 'session-1', new Date().toISOString())
    await h.cloud.storage.printers.syncFromHub(
      account.accountId,
      hub.agent_id,
      [
        {
          key: 'p',
          name: 'Till printer',
          uri: 'socket://127.0.0.1:9100',
          languages: ['escpos'],
          capabilities: (await h.cloud.storage.printers.findById(
            account.accountId,
            account.receiptPrinterId,
          ))!.capabilities,
          health: { state: 'ready', reasons: [], checked_at: new Date().toISOString() },
        },
      ],
      new Date().toISOString(),
    )

    // GET asks; it changes nothing.
    const confirm = await member.get(`/console/hubs/${hub.agent_id}/remove`)
    expect(confirm.statusCode).toBe(200)
    expect(confirm.body).toContain(
      `<form class="inline" method="post" action="/console/hubs/${hub.agent_id}/remove">`,
    )
    expect((await connection(hub.credential)).statusCode).toBe(200)

    const res = await member.post(`/console/hubs/${hub.agent_id}/remove`)
    expect(res.statusCode).toBe(303)
    expect(res.headers.location).toBe('/console/hubs?done=removed')
    const refused = await connection(hub.credential)
    expect(refused.statusCode).toBe(401)
    expect((await h.cloud.storage.agents.findById(hub.agent_id))?.online).toBe(false)
    const printers = (await h.cloud.storage.printers.list(account.accountId, 10))?.data ?? []
    expect(printers.filter((p) => p.agent_id === hub.agent_id).map((p) => [p.name, p.online])).toEqual([
      ['Till printer', false],
    ])

    const list = await member.get('/console/hubs?done=removed')
    expect(textOf(list.body)).toContain(
      'The hub is removed: its credential no longer works and it is offline.',
    )
    expect(tableRows(partUnder(list.body, 'Hubs of this account')).map((row) => row[0])).toEqual([
      'Front desk hub',
    ])
    expect((await member.get(`/console/hubs/${hub.agent_id}`)).statusCode).toBe(404)
    expect((await member.post(`/console/hubs/${hub.agent_id}/remove`)).statusCode).toBe(404)
  })

  it('gives a 404 page for another account’s, an unknown or a malformed id, and changes nothing', async () => {
    const { member } = await freshAccount()
    const other = h.otherAccount
    const theirs = await createEnrollment(h.cloud.storage.enrollments, {
      accountId: other.accountId,
      name: 'Their till',
      ttlHours: 24,
    })
    const before = await h.cloud.storage.agents.findById(other.agentId)
    for (const id of [other.agentId, randomUUID(), 'nope', '..%2F']) {
      for (const path of [`/console/hubs/${id}`, `/console/hubs/${id}/remove`]) {
        const res = await member.get(path)
        expect(res.statusCode, path).toBe(404)
        expect(res.body).toContain('<h1>Hub not found</h1>')
      }
      expect((await member.post(`/console/hubs/${id}/rename`, { name: 'Mine now' })).statusCode).toBe(404)
      expect((await member.post(`/console/hubs/${id}/remove`)).statusCode).toBe(404)
    }
    expect(await h.cloud.storage.agents.findById(other.agentId)).toEqual(before)
    expect(await h.cloud.storage.agents.findUnrevoked(other.accountId, other.agentId)).toBeDefined()

    for (const id of [theirs.enrollment.enrollment_id, randomUUID(), 'nope']) {
      const res = await member.post(`/console/hubs/enrollments/${id}/revoke`)
      expect(res.statusCode, id).toBe(404)
      expect(res.body).toContain('<h1>Enrollment not found</h1>')
    }
    expect((await h.cloud.storage.enrollments.findById(theirs.enrollment.enrollment_id))?.state).toBe(
      'pending',
    )
    expect((await enroll(theirs.token)).statusCode).toBe(201)
  })

  it('refuses a form without the session’s CSRF token, changing nothing', async () => {
    const { account, member } = await freshAccount()
    const res = await member.post(`/console/hubs/${account.agentId}/remove`, { _csrf: 'forged' })
    expect(res.statusCode).toBe(403)
    expect(await h.cloud.storage.agents.findUnrevoked(account.accountId, account.agentId)).toBeDefined()
    const add = await member.post('/console/hubs/enrollments', { _csrf: '', name: 'Sneaky' })
    expect(add.statusCode).toBe(403)
    expect(await h.cloud.storage.enrollments.listPending(account.accountId, new Date())).toEqual([])
  })
})
